// pjsip.conf in Asterisk's syntax, read with the same .conf reader as extensions.conf: `[name]`,
// `type=`, `key=value` / `key => value`, `;` and `;-- --;` comments, templates `[name](!)` and
// inheritance `[name](a,b)` (the template's entries first, so later keys override), `(+)` appends
// and repeated keys in order. `#include`/`#tryinclude` read files beside pjsip.conf when the caller
// gives an include reader (as extensions.conf's); other directives are refused with a warning line.
// Never throws: syntax errors come back as error lines naming file:line.
import { readConfigSections, type ConfigReadOptions, type ConfigSection } from '../../../config/conf/reader.ts';
import { DialplanSyntaxError } from '../../../config/conf/syntax-error.ts';
import { buildPjsipConfig } from './build.ts';
import type { PjsipConfig, RawField, RawPjsipObject } from './types.ts';

/** Largest pjsip.conf read. */
export const MAX_PJSIP_CONF_BYTES = 4 * 1024 * 1024;
/** Entries after template inheritance (bounds `[b](a,a)` chains). */
const MAX_ENTRIES = 200_000;

export interface PjsipConfRead {
  readonly objects: RawPjsipObject[];
  readonly errors: string[];
  readonly warnings: string[];
}

/** Reads the sections of a pjsip.conf into raw objects (templates left out, `type=` taken off). */
export function readPjsipConf(text: string, file: string, include?: ConfigReadOptions['include']): PjsipConfRead {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (typeof text !== 'string') return { objects: [], errors: [`${file}: not a text file`], warnings };
  if (Buffer.byteLength(text) > MAX_PJSIP_CONF_BYTES) {
    return { objects: [], errors: [`${file}: larger than ${MAX_PJSIP_CONF_BYTES} bytes`], warnings };
  }
  let sections: ConfigSection[];
  try {
    sections = readConfigSections(text, file, {
      maxEntries: MAX_ENTRIES,
      ...(include && { include }),
      onDirective(directive, at) {
        const word = directive.split(/\s/, 1)[0].slice(0, 40);
        warnings.push(`${at.file}:${at.line}: ${word} is not supported by Patchbay; line ignored (copy the sections it names into ${file})`);
      },
    });
  } catch (error) {
    errors.push(error instanceof DialplanSyntaxError ? error.message : `${file}: ${error instanceof Error ? error.message : String(error)}`);
    return { objects: [], errors, warnings };
  }

  const objects: RawPjsipObject[] = [];
  for (const section of sections) {
    if (section.template) continue;
    // A section read from an #include'd file is named by that file (its entries carry it).
    const where = `${section.entries[0]?.file ?? file}:${section.line}`;
    const fields: RawField[] = [];
    let type: string | undefined;
    for (const entry of section.entries) {
      const name = entry.name.toLowerCase();
      const at = `${entry.file ?? file}:${entry.line}`;
      if (name === 'type') {
        type = entry.value;
        continue;
      }
      if (entry.append) {
        // `key += value` extends the last value of the key (Asterisk's append).
        let last = fields.length - 1;
        while (last >= 0 && fields[last].name !== name) last--;
        if (last >= 0) fields[last] = { name, value: fields[last].value + entry.value, where: at };
        else fields.push({ name, value: entry.value, where: at });
        continue;
      }
      fields.push({ name, value: entry.value, where: at });
    }
    if (type === undefined || type.trim() === '') {
      warnings.push(`${where}: [${section.name}] has no type=; section ignored`);
      continue;
    }
    objects.push({ type: type.trim().toLowerCase(), id: section.name, fields, where });
  }
  return { objects, errors, warnings };
}

/** Reads and builds a pjsip.conf: the typed configuration plus every error and warning line. */
export function loadPjsipConf(text: string, file: string): { config: PjsipConfig; errors: string[]; warnings: string[] } {
  const read = readPjsipConf(text, file);
  const built = buildPjsipConfig(read.objects);
  return { config: built.value, errors: [...read.errors, ...built.errors], warnings: [...read.warnings, ...built.warnings] };
}
