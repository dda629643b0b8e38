// The dialplan library: parse extensions.conf, look steps up, substitute and evaluate.
export { splitArgs } from './args.ts';
export { DEFAULT_DIALPLAN, DEFAULT_DIALPLAN_FILE, loadDefaultDialplan } from './default-dialplan.ts';
export { Dialplan, type DialplanOptions, type DialplanStep } from './dialplan.ts';
export { evaluateExpression, ExpressionError } from './expression.ts';
export type {
  ParsedContext,
  ParsedDialplan,
  ParsedExtension,
  ParsedInclude,
  ParsedStep,
  ParsedSwitch,
} from './parsed.ts';
export { parseDialplan } from './parser.ts';
export { substitute, substring, type FunctionResolver, type VariableResolver } from './substitute.ts';
export { DialplanSyntaxError } from '../config/conf/syntax-error.ts';
