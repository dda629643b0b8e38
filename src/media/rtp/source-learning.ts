// Whose packets a stream takes, and where its media goes when symmetric (rtp_symmetric: we send to
// where the far end's packets come from once they come, RFC 4961 in spirit, for phones behind NAT); strict by
// default as Asterisk's `strictrtp`. The source is learned only at the start of the call and after
// the far end's SDP moved its media, and only from a source that sent `probation` packets in
// sequence; after that, packets from anywhere else are refused, so a stranger cannot redirect the
// call's audio to itself. Per packet only strings and numbers are compared: nothing is allocated.

export class RtpSourceLearning {
  #address: string | undefined;
  #port = 0;
  /** Strict RTP: a source may still be learned (start of call, after the SDP moved the media). */
  #learning = true;
  /** Packets in sequence from where media goes now, and the last one's sequence number. */
  #targetRun = 0;
  #targetSequence = 0;
  /** Another source on probation: its address, packets in sequence, the last sequence number. */
  #candidateAddress: string | undefined;
  #candidatePort = 0;
  #candidateRun = 0;
  #candidateSequence = 0;
  /**
   * The source learned before the SDP moved the media: its packets still in flight while learning
   * again are heard, but it can never be learned back by them (else a phone moving networks would
   * be locked onto the path it left).
   */
  #previousAddress: string | undefined;
  #previousPort = 0;
  /** The previous source is another party's (a fork not followed): refused, never a candidate. */
  #previousRefused = false;

  /**
   * @param strict learn only while learning, then lock (false: every sender is taken at once)
   * @param probation packets in sequence a source must send before it is taken (at least 1)
   * @param onSwitch media goes to another source from now on (called when it changes, not per packet)
   */
  constructor(
    private readonly strict: boolean,
    private readonly probation: number,
    private readonly onSwitch: (address: string, port: number) => void,
  ) {}

  /** Where media goes: the SDP's address until a source is learned, then that source. */
  get address(): string | undefined {
    return this.#address;
  }

  get port(): number {
    return this.#port;
  }

  /** A source may still be learned (a stranger now is no news: a phone behind NAT). */
  get learning(): boolean {
    return this.#learning;
  }

  /**
   * The far end's SDP gave a new media address (the call's first, or a re-INVITE moving it): send
   * there and learn the source again; the source learned so far is still heard meanwhile, unless
   * `otherParty` (another fork's SDP): then it is refused, and cannot be learned back.
   */
  restart(address: string | undefined, port: number, first: boolean, otherParty = false): void {
    this.#previousAddress = first ? undefined : this.#address;
    this.#previousPort = first ? 0 : this.#port;
    this.#previousRefused = otherParty;
    this.#address = address;
    this.#port = port;
    this.#learning = true;
    this.#targetRun = 0;
    this.#candidateRun = 0;
    this.#candidateAddress = undefined;
  }

  /**
   * Whether an RTP packet from `address`:`port` is the far end's (a source taken becomes where
   * media goes). While learning, packets from where media goes are taken (and `probation` of them
   * in sequence end learning there); another source must send `probation` packets in sequence,
   * uninterrupted by the current one, before it is taken and learning ends; after learning only
   * the learned source counts. `farEndSends` false (its SDP said sendonly for us, or inactive):
   * nobody else is learned.
   */
  accept(address: string, port: number, sequence: number, farEndSends: boolean): boolean {
    const fromTarget = port === this.#port && address === this.#address;
    if (!fromTarget && this.#previousRefused && port === this.#previousPort && address === this.#previousAddress) return false;
    if (!this.strict) {
      if (!fromTarget) this.#switchTo(address, port);
      return true;
    }
    if (!this.#learning) return fromTarget;
    if (fromTarget) {
      // The far end sends from where we send: a source on probation starts over.
      this.#candidateRun = 0;
      this.#targetRun = this.#targetRun > 0 && sequence === ((this.#targetSequence + 1) & 0xffff) ? this.#targetRun + 1 : 1;
      this.#targetSequence = sequence;
      if (this.#targetRun >= this.probation) this.#learning = false;
      return true;
    }
    if (port === this.#previousPort && address === this.#previousAddress) return true;
    if (!farEndSends) return false;
    if (this.#candidateRun > 0 && port === this.#candidatePort && address === this.#candidateAddress && sequence === ((this.#candidateSequence + 1) & 0xffff)) {
      this.#candidateRun += 1;
    } else {
      this.#candidateAddress = address;
      this.#candidatePort = port;
      this.#candidateRun = 1;
    }
    this.#candidateSequence = sequence;
    if (this.#candidateRun < this.probation) return false;
    this.#switchTo(address, port);
    this.#learning = false;
    this.#candidateRun = 0;
    return true;
  }

  #switchTo(address: string, port: number): void {
    this.#address = address;
    this.#port = port;
    this.onSwitch(address, port);
  }
}
