// Bounds on what one play request may ask for, checked before anything starts so an oversized
// request is answered 400 without a Playback or an event. Each bound is far above real use; what
// it prevents is a request making the server build something in proportion to its size.
import { countToneParts, MAX_TONE_PARTS } from '../../media/tones.ts';

/** Media URIs in one playback (the ARI layer already refuses lists of 128 values or more). */
export const MAX_MEDIA_ITEMS = 127;
/** Characters in one media URI, scheme included. */
export const MAX_MEDIA_URI_LENGTH = 16_384;
/** Characters said by one `digits:` or `characters:` URI (about two hours of speech). */
export const MAX_SAY_CHARACTERS = 16_000;
/** Characters after `number:` (a 32-bit number needs 11; sscanf-style trailing text is allowed). */
export const MAX_NUMBER_TEXT = 64;
export { MAX_TONE_PARTS };

/** Why a play request's media list is refused, or undefined when it is within the bounds. */
export function mediaListProblem(media: readonly string[]): string | undefined {
  if (media.length > MAX_MEDIA_ITEMS) return `Too many media URIs: ${media.length}; at most ${MAX_MEDIA_ITEMS}`;
  for (const uri of media) {
    const problem = mediaUriProblem(uri);
    if (problem) return problem;
  }
  return undefined;
}

/** Why one media URI is refused, or undefined. Only sizes are checked here; content is the player's. */
export function mediaUriProblem(uri: string): string | undefined {
  const colon = uri.indexOf(':');
  // Scheme names are short: a long prefix without a colon is no scheme (and no slice is made of it).
  const scheme = colon < 0 || colon > 16 ? '' : uri.slice(0, colon);
  const resourceLength = uri.length - colon - 1;
  switch (scheme) {
    case 'digits':
    case 'characters':
      if (resourceLength > MAX_SAY_CHARACTERS) {
        return `${scheme}: too long: ${resourceLength} characters; at most ${MAX_SAY_CHARACTERS}`;
      }
      break;
    case 'number':
      if (resourceLength > MAX_NUMBER_TEXT) return `number: too long: ${resourceLength} characters; at most ${MAX_NUMBER_TEXT}`;
      break;
    case 'tone': {
      if (uri.length > MAX_MEDIA_URI_LENGTH) break;
      // The parts are before any `;tonezone=` option.
      const semicolon = uri.indexOf(';', colon + 1);
      const parts = countToneParts(uri.slice(colon + 1, semicolon < 0 ? uri.length : semicolon));
      if (parts > MAX_TONE_PARTS) return `tone: too many parts: ${parts}; at most ${MAX_TONE_PARTS}`;
      break;
    }
  }
  if (uri.length > MAX_MEDIA_URI_LENGTH) return `Media URI too long: ${uri.length} characters; at most ${MAX_MEDIA_URI_LENGTH}`;
  return undefined;
}
