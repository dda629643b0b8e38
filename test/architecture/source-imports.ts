// Every relative import of every TypeScript file under src/, read with the TypeScript parser rather
// than a regular expression, so multi-line imports, `export … from`, `import type`, side-effect
// imports, dynamic `import()` and `import('…').Type` are all seen and text in comments or strings
// is not. Used by the floors test (docs/architecture.md).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface SourceImport {
  /** The importing file, relative to the repository (`src/core/kernel.ts`). */
  readonly from: string;
  /** The imported file, relative to the repository, with `.js` read as `.ts`. */
  readonly to: string;
  /** Only types cross (`import type`, `export type`, `import('…').T`): erased at run time. */
  readonly typeOnly: boolean;
}

/** All `.ts` files under `directory` (relative to `root`), sorted. */
export function sourceFiles(root: string, directory: string): string[] {
  const out: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts')) out.push(child);
    }
  };
  walk(directory);
  return out.sort();
}

/** The relative imports of one file (package imports such as `ws` or `node:fs` are not floors). */
export function importsOf(root: string, file: string): SourceImport[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: SourceImport[] = [];
  const add = (specifier: ts.Expression | undefined, typeOnly: boolean): void => {
    if (!specifier || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith('.')) return;
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier.text)).replace(/\.js$/, '.ts');
    found.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly = clause !== undefined && (clause.isTypeOnly || onlyTypeSpecifiers(clause));
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      const typeOnly = node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `import { type A, type B } from` names only types, like `import type`. */
function onlyTypeSpecifiers(clause: ts.ImportClause): boolean {
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}
