// Lists the exports under src/ that nothing imports: `tsx scripts/unused-exports.ts`. For each
// exported declaration, the TypeScript language service finds its references in src/, test/,
// bench/ and scripts/; an export referenced only inside its own file should lose `export`, one
// referenced nowhere should go. Re-exports (index.ts) count as uses only when they are used.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
const files = [...parsed.fileNames, ...ts.sys.readDirectory(path.join(ROOT, 'scripts'), ['.ts'])];
const host: ts.LanguageServiceHost = {
  getScriptFileNames: () => files,
  getScriptVersion: () => '1',
  getScriptSnapshot: (name) => (ts.sys.fileExists(name) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(name)!) : undefined),
  getCurrentDirectory: () => ROOT,
  getCompilationSettings: () => parsed.options,
  getDefaultLibFileName: ts.getDefaultLibFilePath,
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
};
const service = ts.createLanguageService(host);
const program = service.getProgram()!;

/** The names a statement exports, with the position of each name. */
function exportedNames(statement: ts.Statement): ts.Identifier[] {
  const isExported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  if (ts.isExportDeclaration(statement) && !statement.moduleSpecifier && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
    return statement.exportClause.elements.map((e) => e.name).filter(ts.isIdentifier);
  }
  if (!isExported) return [];
  if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name).filter(ts.isIdentifier);
  const named = statement as ts.Statement & { name?: ts.Node };
  return named.name && ts.isIdentifier(named.name) ? [named.name] : [];
}

const unused: string[] = [];
const localOnly: string[] = [];
for (const source of program.getSourceFiles()) {
  const file = path.relative(ROOT, source.fileName);
  if (!file.startsWith('src/') || file.endsWith('.d.ts')) continue;
  for (const statement of source.statements) {
    for (const name of exportedNames(statement)) {
      const references = service.findReferences(source.fileName, name.getStart(source)) ?? [];
      const elsewhere = new Set<string>();
      let here = 0;
      for (const symbol of references) {
        for (const ref of symbol.references) {
          if (ref.isDefinition) continue;
          const refFile = path.relative(ROOT, ref.fileName);
          if (refFile === file) here++;
          else {
            // An `export { x } from` in an index counts only if someone imports it from there.
            const text = program.getSourceFile(ref.fileName)!.text;
            const line = text.slice(text.lastIndexOf('\n', ref.textSpan.start) + 1, text.indexOf('\n', ref.textSpan.start));
            if (/^\s*export\s/.test(line) && /\bfrom\b/.test(line)) continue;
            elsewhere.add(refFile);
          }
        }
      }
      const where = `${file}:${source.getLineAndCharacterOfPosition(name.getStart(source)).line + 1} ${name.text}`;
      if (elsewhere.size === 0 && here === 0) unused.push(where);
      else if (elsewhere.size === 0) localOnly.push(where);
    }
  }
}
console.log(`# exported, used nowhere (${unused.length})`);
console.log(unused.join('\n'));
console.log(`\n# exported, used only in their own file (${localOnly.length})`);
console.log(localOnly.join('\n'));
