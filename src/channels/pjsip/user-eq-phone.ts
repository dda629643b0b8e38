// user_eq_phone: `;user=phone` on the URIs of our requests whose user is a telephone number, as
// res_pjsip's ast_sip_add_usereqphone marks them (the Request-URI and To of a call, and its From).
import { formatNameAddr, parseNameAddr, type Uri } from '../../sip/uri.ts';

/** A telephone number as res_pjsip tells one: an optional `+`, then only AST_DIGIT_ANY (0-9 # * A-D). */
const TELEPHONE_USER = /^\+?[0-9#*ABCD]+$/;

/** The URI with `;user=phone` when it is a SIP(S) URI whose user is a telephone number; else the URI itself. */
export function withUserPhone<U extends Uri>(uri: U): U {
  if (uri.kind !== 'sip' || uri.user === undefined || !TELEPHONE_USER.test(uri.user)) return uri;
  const params = new Map(uri.params);
  params.set('user', 'phone');
  return { ...uri, params };
}

/** A From or To value (name-addr with its parameters) whose URI is marked as withUserPhone does. */
export function nameAddrWithUserPhone(text: string): string {
  const parsed = parseNameAddr(text);
  if (!parsed) return text;
  const uri = withUserPhone(parsed.uri);
  return uri === parsed.uri ? text : formatNameAddr({ ...parsed, uri });
}
