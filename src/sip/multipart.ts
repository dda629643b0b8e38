/**
 * The session description inside a multipart body (RFC 2046 §5.1, RFC 5621): gateways send
 * `multipart/mixed` INVITEs carrying SDP beside ISUP or location parts, and Asterisk's SIP stack
 * takes the first `application/sdp` part of a `multipart/mixed` or `multipart/alternative` body as
 * the offer. Everything here is hostile input: the boundary is checked (1–70 characters), at most
 * MAX_PARTS parts are looked at, and nested multiparts are not entered.
 */

/** Parts of one body looked at before giving up. */
export const MAX_PARTS = 16;
const SDP = 'application/sdp';
/** The multipart types an SDP part is taken from (as Asterisk's stack: not multipart/related). */
const SDP_CARRIERS = new Set(['multipart/mixed', 'multipart/alternative']);

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/** The `boundary` parameter of a multipart Content-Type (quoted or not), or undefined when absent or invalid. */
export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  // RFC 2046 §5.1.1: 1 to 70 characters, not ending in a space.
  if (boundary === undefined || boundary.length === 0 || boundary.length > 70 || boundary.endsWith(' ')) return undefined;
  return boundary;
}

/** Whether a Content-Type is a multipart an SDP part may be taken from. */
export function carriesSdpParts(contentType: string | undefined): boolean {
  return SDP_CARRIERS.has(mediaTypeOf(contentType));
}

/**
 * The body of the first `application/sdp` part of a multipart/mixed or multipart/alternative body,
 * or undefined when there is none (or the body is no such multipart, or is malformed).
 */
export function sdpPartOf(contentType: string | undefined, body: Buffer): Buffer | undefined {
  if (!carriesSdpParts(contentType)) return undefined;
  const boundary = boundaryOf(contentType ?? '');
  if (boundary === undefined) return undefined;
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  // The first delimiter may open the body; every later one follows a CRLF (§5.1.1).
  const separator = Buffer.from(`\r\n--${boundary}`, 'latin1');
  let at = body.subarray(0, delimiter.length).equals(delimiter) ? 0 : body.indexOf(separator);
  if (at < 0) return undefined;
  if (at > 0) at += 2;
  for (let part = 0; part < MAX_PARTS; part++) {
    const afterDelimiter = at + delimiter.length;
    // The close delimiter (`--boundary--`) ends the body.
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) return undefined;
    const lineEnd = body.indexOf('\r\n', afterDelimiter);
    if (lineEnd < 0) return undefined;
    const next = body.indexOf(separator, lineEnd);
    const partEnd = next < 0 ? body.length : next;
    // The part's headers end at a blank line (right after the delimiter line when it has none).
    const headerEnd = body.indexOf('\r\n\r\n', lineEnd);
    if (headerEnd >= 0 && headerEnd <= partEnd) {
      // Part headers without a Content-Type are text/plain (§5.1); only an SDP one is taken.
      const type = /^content-type\s*:\s*(.*)$/im.exec(body.subarray(lineEnd + 2, headerEnd).toString('latin1'))?.[1];
      if (mediaTypeOf(type) === SDP) return body.subarray(headerEnd + 4, partEnd);
    }
    if (next < 0) return undefined;
    at = next + 2;
  }
  return undefined;
}

/**
 * The SDP a message carries: its body, or for a multipart/mixed or multipart/alternative body the
 * first application/sdp part (empty when it has none). Other bodies are returned as they are: the
 * caller's own checks (refuseNonSdpBody) decide about them.
 */
export function sessionDescriptionOf(message: { readonly body: Buffer; contentType(): string | undefined }): Buffer {
  const contentType = message.contentType();
  if (message.body.length === 0 || !carriesSdpParts(contentType)) return message.body;
  return sdpPartOf(contentType, message.body) ?? Buffer.alloc(0);
}
