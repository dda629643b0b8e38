// Echo(): every audio frame and DTMF digit the channel receives goes straight back to it, until
// it hangs up or sends `#` (which, as in app_echo, is echoed and then ends the application).
import type { FrameListener } from '../../core/channels/channel.ts';
import type { AppOutcome, DialplanApplication } from '../application.ts';

export const echo: DialplanApplication = {
  name: 'Echo',
  synopsis: 'Sends the audio and DTMF of the caller back until # is pressed',
  execute(channel): Promise<AppOutcome> {
    if (channel.hangingUp) return Promise.resolve('stop');
    return new Promise((resolve) => {
      const onFrame: FrameListener = (frame, from) => from.write(frame);
      const finish = (outcome: AppOutcome): void => {
        channel.removeFrameListener(onFrame);
        channel.off('dtmf', onDigit);
        channel.off('hangup', onHangup);
        resolve(outcome);
      };
      const onDigit = ({ digit, durationMs }: { digit: string; durationMs: number }): void => {
        if (channel.hangingUp) return;
        channel.driver.sendDigit(digit, durationMs);
        if (digit === '#') finish('next');
      };
      const onHangup = (): void => finish('stop');
      channel.addFrameListener(onFrame);
      channel.on('dtmf', onDigit);
      channel.once('hangup', onHangup);
    });
  },
};
