// The floors of docs/architecture.md, checked on every import under src/: an import points to a
// lower floor (or stays in its own folder), folders form no circle, files form none either (but
// a type-only pair side by side), and one technology never reaches into another. There is no
// allow-list: the last upward imports (the core's, to pbx/, control/ and channels/pjsip) went
// with the technology seam, and a new one fails the build.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { importsOf, sourceFiles, type SourceImport } from './source-imports.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Floor of each folder of src/, lowest first. A file may import its own folder and any folder on
 * a LOWER floor; folders sharing a floor (config/media, control/testing, ari/ops/cli/console/cluster) are independent of
 * each other. Files directly in src/ (server.ts, main.ts, log.ts) are the composition root, above all.
 */
const FLOORS: Readonly<Record<string, number>> = {
  spec: 0,
  util: 1,
  config: 2,
  media: 2,
  sip: 3,
  dialplan: 4,
  core: 5,
  pbx: 6,
  channels: 7,
  control: 8,
  testing: 8,
  ari: 9,
  ops: 9,
  cli: 9,
  console: 9,
  cluster: 9,
};
const ROOT_FLOOR = 10;
const ROOT_FOLDER = '(src)';

/** The folder of src/ a file belongs to (`core` for src/core/channels/channel.ts). */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts.length > 2 ? parts[1]! : ROOT_FOLDER;
}

function floorOf(folder: string): number | undefined {
  return folder === ROOT_FOLDER ? ROOT_FLOOR : FLOORS[folder];
}

const edge = (i: SourceImport): string => `${i.from} -> ${i.to}`;

const files = sourceFiles(ROOT, 'src');
const imports = files.flatMap((file) => importsOf(ROOT, file));

/** Imports that leave their folder for one on the same or a higher floor. */
function floorViolations(): SourceImport[] {
  return imports.filter((i) => {
    const from = folderOf(i.from);
    const to = folderOf(i.to);
    return from !== to && floorOf(to)! >= floorOf(from)!;
  });
}

/** A circle in the folder graph (`a -> b -> a`), or undefined. */
function folderCircle(): string[] | undefined {
  const next = new Map<string, Set<string>>();
  for (const i of imports) {
    const from = folderOf(i.from);
    const to = folderOf(i.to);
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)!.add(to);
  }
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (folder: string): string[] | undefined => {
    if (state.get(folder) === 'done') return undefined;
    if (state.get(folder) === 'open') return [...stack.slice(stack.indexOf(folder)), folder];
    state.set(folder, 'open');
    stack.push(folder);
    for (const to of next.get(folder) ?? []) {
      const circle = visit(to);
      if (circle) return circle;
    }
    stack.pop();
    state.set(folder, 'done');
    return undefined;
  };
  for (const folder of [...next.keys()].sort()) {
    const circle = visit(folder);
    if (circle) return circle;
  }
  return undefined;
}

/** Files that reach each other through their imports, and the imports among them. */
type FileCircle = { files: string[]; imports: SourceImport[] };

/**
 * The import circles between files: each strongly connected part of the file graph with more than
 * one file (Tarjan's algorithm), as its files (sorted) and the imports inside it.
 */
function fileCircles(): FileCircle[] {
  const next = new Map<string, Set<string>>();
  for (const i of imports) {
    if (!next.has(i.from)) next.set(i.from, new Set());
    next.get(i.from)!.add(i.to);
  }
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const parts: string[][] = [];
  // Recursion depth is bounded by the longest import chain, a few dozen files.
  const connect = (file: string): void => {
    index.set(file, index.size);
    lowest.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        lowest.set(file, Math.min(lowest.get(file)!, lowest.get(to)!));
      } else if (onStack.has(to)) {
        lowest.set(file, Math.min(lowest.get(file)!, index.get(to)!));
      }
    }
    if (lowest.get(file) !== index.get(file)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      part.push(member);
    } while (member !== file);
    if (part.length > 1) parts.push(part.sort());
  };
  for (const file of files) if (!index.has(file)) connect(file);
  return parts.map((part) => ({ files: part, imports: imports.filter((i) => part.includes(i.from) && part.includes(i.to)) }));
}

/**
 * What is wrong with a knot of files that reach each other (one strongly connected part). The one
 * circle allowed is a type-only pair: two files of the same directory that import each other where
 * at least one way names only types, so that at run time nothing loads in a circle (a transaction
 * and the handlers of its client transaction). A file may be in several such pairs (a call with its
 * types and with its hold logic); any circle through three files or more, a pair across
 * directories, or values both ways is a tangle to undo.
 */
function tanglesOf(circle: FileCircle): string[] {
  const tangles: string[] = [];
  const between = (from: string, to: string): SourceImport[] => circle.imports.filter((i) => i.from === from && i.to === to);
  for (const [i, a] of circle.files.entries()) {
    for (const b of circle.files.slice(i + 1)) {
      const there = between(a, b);
      const back = between(b, a);
      if (there.length === 0 || back.length === 0) continue;
      const valuesBothWays = there.some((e) => !e.typeOnly) && back.some((e) => !e.typeOnly);
      if (valuesBothWays || path.posix.dirname(a) !== path.posix.dirname(b)) tangles.push(`${a} <-> ${b}`);
    }
  }
  // A circle through three files or more runs over some import `from -> to` and back from `to` to
  // `from` by a path other than the direct import back; one such ring per knot is enough to show.
  const next = new Map<string, Set<string>>();
  for (const i of circle.imports) {
    if (!next.has(i.from)) next.set(i.from, new Set());
    next.get(i.from)!.add(i.to);
  }
  for (const { from, to } of circle.imports) {
    const cameFrom = new Map<string, string>([[to, to]]);
    const queue = [to];
    while (queue.length > 0 && !cameFrom.has(from)) {
      const file = queue.shift()!;
      for (const nextFile of next.get(file) ?? []) {
        if ((file === to && nextFile === from) || cameFrom.has(nextFile)) continue;
        cameFrom.set(nextFile, file);
        queue.push(nextFile);
      }
    }
    if (!cameFrom.has(from)) continue;
    const ring = [from];
    for (let file = cameFrom.get(from)!; file !== to; file = cameFrom.get(file)!) ring.unshift(file);
    tangles.push([from, to, ...ring].join(' -> '));
    break;
  }
  return tangles;
}

/** The technology a file under src/channels/ belongs to: its sub-folder (local/, pjsip/ …), or a file directly under channels/; undefined for channels/index.ts. */
function technologyOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[1] !== 'channels' || parts.length < 3) return undefined;
  if (parts.length > 3) return parts[2];
  return parts[2] === 'index.ts' ? undefined : parts[2]!.replace(/\.ts$/, '');
}

describe('floors (docs/architecture.md)', () => {
  test('the import reader sees every form of import', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'patchbay-floors-'));
    try {
      writeFileSync(
        path.join(dir, 'sample.ts'),
        [
          "// import { fake } from './in-a-comment.ts';",
          "import {",
          "  a,",
          "  b,",
          "} from './multi-line.ts';",
          "import type { T } from './type-only.ts';",
          "import { type U, type V } from './type-specifiers.ts';",
          "import { type W, value } from './mixed.ts';",
          "import './side-effect.ts';",
          "export { c } from './re-export.js';",
          "export type { D } from './type-re-export.ts';",
          "export * from './star.ts';",
          "const later = () => import('./dynamic.ts');",
          "type Lazy = import('./import-type.ts').Lazy;",
          "import fs from 'node:fs';",
          "const text = \"import x from './in-a-string.ts'\";",
        ].join('\n'),
      );
      const found = importsOf(dir, 'sample.ts').map((i) => `${i.to}${i.typeOnly ? ' (type)' : ''}`);
      assert.deepEqual(found, [
        'multi-line.ts',
        'type-only.ts (type)',
        'type-specifiers.ts (type)',
        'mixed.ts',
        'side-effect.ts',
        're-export.ts',
        'type-re-export.ts (type)',
        'star.ts',
        'dynamic.ts',
        'import-type.ts (type)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the check reads the whole source tree', () => {
    assert.ok(files.length > 200, `only ${files.length} files under src/`);
    assert.ok(imports.some((i) => i.from === 'src/main.ts'), 'main.ts imports nothing?');
    assert.ok(imports.every((i) => i.to.startsWith('src/')), `an import leaves src/: ${imports.find((i) => !i.to.startsWith('src/')) && edge(imports.find((i) => !i.to.startsWith('src/'))!)}`);
  });

  test('every folder of src/ has a floor', () => {
    const folders = readdirSync(path.join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    const unknown = folders.filter((folder) => FLOORS[folder] === undefined);
    assert.deepEqual(unknown, [], 'add the folder to FLOORS here and to docs/architecture.md');
  });

  test('no import points to its own floor or a higher one', () => {
    const upward = floorViolations().map((i) => `${edge(i)}  [${folderOf(i.from)} (${floorOf(folderOf(i.from))}) -> ${folderOf(i.to)} (${floorOf(folderOf(i.to))})]`);
    assert.deepEqual(upward, [], 'an import points upward or sideways: let the lower floor declare the interface it needs (docs/architecture.md)');
  });

  test('no two folders import each other, and no circle runs through folders', () => {
    assert.equal(folderCircle()?.join(' -> '), undefined);
  });

  test('no import circle between files, except type-only pairs in one directory', () => {
    const circles = fileCircles();
    // The tree has no circle left at all (not even a type-only pair), so the finder's own sanity is
    // checked on what it reads: every file's imports, hundreds of edges between src/ files.
    assert.ok(imports.length > 500, `the circle finder reads ${imports.length} imports between files: is it still reading them?`);
    assert.deepEqual(circles.flatMap(tanglesOf), [], 'files import each other in a circle: move the shared declaration to a file of its own, or let the lower file declare the interface it needs (docs/architecture.md)');
  });

  test('a technology under src/channels/ imports no other technology', () => {
    const crossing = imports
      .filter((i) => {
        const from = technologyOf(i.from);
        const to = technologyOf(i.to);
        return from !== undefined && to !== undefined && from !== to;
      })
      .map(edge);
    assert.deepEqual(crossing, [], 'share through a lower floor (core/, media/, sip/) instead');
  });
});
