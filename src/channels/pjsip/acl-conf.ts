// The named ACLs pjsip.conf's `acl=` and `contact_acl=` refer to: the sections of acl.conf beside
// pjsip.conf (Asterisk reads /etc/asterisk/acl.conf, where pjsip.conf is too), read again with each
// reload of pjsip.conf; a name acl.conf does not have is looked up in the settings' `ari.acls`
// (acl.conf of `asterisk_config_dir`, or YAML). Each section's permit/deny lines are one chain in the
// order written, templates (`[name](!)`) give only their lines to those that inherit them.
import fs from 'node:fs';
import path from 'node:path';
import { readConfigSections } from '../../config/conf/reader.ts';
import { DialplanSyntaxError } from '../../config/conf/syntax-error.ts';
import type { NamedAcl } from '../../config/ari-users.ts';
import { parseAclRule, type AclRule } from '../../util/acl.ts';

/** Largest acl.conf read, and most entries in it: a hostile file must stay bounded. */
const MAX_ACL_CONF_BYTES = 1024 * 1024;
const MAX_ACL_CONF_ENTRIES = 20_000;

/** A named ACL: its rules in order, or `invalid` (an entry could not be read: it refuses every address, as Asterisk's). */
export interface NamedRules {
  readonly name: string;
  readonly rules: readonly AclRule[];
  readonly invalid: boolean;
}

interface AclConfRead {
  /** By lower-cased name (Asterisk compares ACL names without case). */
  readonly acls: ReadonlyMap<string, NamedRules>;
  readonly errors: string[];
  readonly warnings: string[];
}

/** acl.conf beside `pjsipConf`, when there is one (an empty map otherwise). Never throws. */
export function readAclConfBeside(pjsipConf: string | null | undefined): AclConfRead {
  const acls = new Map<string, NamedRules>();
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!pjsipConf) return { acls, errors, warnings };
  const file = path.join(path.dirname(pjsipConf), 'acl.conf');
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return { acls, errors, warnings };
    if (stat.size > MAX_ACL_CONF_BYTES) {
      errors.push(`${file}: larger than ${MAX_ACL_CONF_BYTES} bytes; not read (its ACLs refuse every address)`);
      return { acls, errors, warnings };
    }
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT') errors.push(`${file}: cannot be read (${code ?? String(error)})`);
    return { acls, errors, warnings };
  }
  let sections;
  try {
    sections = readConfigSections(text, file, {
      maxEntries: MAX_ACL_CONF_ENTRIES,
      onDirective: (directive, at) => warnings.push(`${file}:${at.line}: ${directive.split(/\s/, 1)[0]!.slice(0, 40)} is not supported; line ignored`),
    });
  } catch (error) {
    errors.push(error instanceof DialplanSyntaxError ? error.message : `${file}: ${error instanceof Error ? error.message : String(error)}`);
    return { acls, errors, warnings };
  }
  for (const section of sections) {
    if (section.template) continue;
    const rules: AclRule[] = [];
    let invalid = false;
    for (const entry of section.entries) {
      const name = entry.name.trim().toLowerCase();
      const at = `${file}:${entry.line}`;
      if (name !== 'permit' && name !== 'deny') {
        warnings.push(`${at}: [${section.name}] option ${name.slice(0, 40)} is not supported by Patchbay; ignored`);
        continue;
      }
      for (const item of entry.value.split(',')) {
        if (item.trim() === '') continue;
        const rule = parseAclRule(item, name === 'permit');
        if (typeof rule === 'string') {
          errors.push(`${at}: [${section.name}] bad ${name} entry: ${rule}; this ACL refuses every address`);
          invalid = true;
        } else {
          rules.push(rule);
        }
      }
    }
    const key = section.name.toLowerCase();
    if (acls.has(key)) warnings.push(`${file}:${section.line}: [${section.name}] a second ACL with this name; the first is kept`);
    else acls.set(key, { name: section.name, rules, invalid });
  }
  return { acls, errors, warnings };
}

/** The settings' named ACLs (`ari.acls`, already checked) as rule chains in their written order. */
export function settingsAcls(named: ReadonlyMap<string, NamedAcl>): Map<string, NamedRules> {
  const out = new Map<string, NamedRules>();
  for (const [key, acl] of named) {
    const rules: AclRule[] = [];
    let invalid = false;
    for (const entry of [...acl.permit, ...acl.deny].sort((a, b) => a.order - b.order)) {
      const rule = parseAclRule(entry.entry, entry.sense === 'permit');
      if (typeof rule === 'string') invalid = true;
      else rules.push(rule);
    }
    out.set(key, { name: key, rules, invalid });
  }
  return out;
}
