// Echo(): every audio frame and DTMF digit the channel receives goes straight back to it, until
// it hangs up or sends `#` (which, as in app_echo, is echoed and then ends the application).
// Fast path: when nothing else takes the channel's audio and its technology can loop it (a SIP
// call whose media runs in a media worker), the technology sends the audio back by itself and no
// frame reaches this thread; as soon as something taps the channel (a snoop, a listener, a hook)
// the echo goes back to frame by frame, so the tap hears the caller. A tone the core plays for an
// indication ends at the first echoed frame; under any other generator the echo is dropped (ast_write).
import type { FrameListener } from '../../core/channels/channel.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';

export const echo: DialplanApplication = {
  name: 'Echo',
  synopsis: 'Sends the audio and DTMF of the caller back until # is pressed',
  execute(channel): Promise<AppOutcome> {
    if (channel.hangingUp) return Promise.resolve('stop');
    return new Promise((resolve) => {
      // As ast_write under a generator: an interruptible one (an indication tone) gives way to the
      // echo; while another plays (PlayTones()'s, a playback) the echoed frame is dropped.
      const onFrame: FrameListener = (frame, from) => {
        if (!from.generatorActive || from.interruptOnWrite !== undefined) from.write(frame);
      };
      let looping = false;
      const finish = (outcome: AppOutcome): void => {
        if (looping) channel.driver.loopAudio?.(false);
        looping = false;
        channel.removeFrameListener(onFrame);
        channel.off('media-tapped', onTapped);
        channel.off('dtmf', onDigit);
        channel.off('hangup', onHangup);
        resolve(outcome);
      };
      const onTapped = (): void => {
        if (!looping) return;
        looping = false;
        channel.driver.loopAudio?.(false);
        channel.addFrameListener(onFrame);
      };
      const onDigit = ({ digit, durationMs }: { digit: string; durationMs: number }): void => {
        if (channel.hangingUp) return;
        channel.driver.sendDigit(digit, durationMs);
        if (digit === '#') finish('next');
      };
      const onHangup = (): void => finish('stop');
      looping = !channel.mediaTapped && channel.driver.loopAudio?.(true) === true;
      if (looping) channel.on('media-tapped', onTapped);
      else channel.addFrameListener(onFrame);
      channel.on('dtmf', onDigit);
      channel.once('hangup', onHangup);
    });
  },
};
