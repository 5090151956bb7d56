/** Writes a generated word table (a TypeScript module exporting one ReadonlySet) under src/tickers/. */
import { writeFileSync } from 'node:fs';

/** SCOWL's licence, which every table derived from its lists carries. */
export const SCOWL_NOTICE = [
  'SCOWL: Copyright 2000-2011 by Kevin Atkinson. Permission to use, copy, modify, distribute and sell',
  'these word lists, the associated scripts, the output created from the scripts, and its documentation',
  'for any purpose is hereby granted without fee, provided that the above copyright notice appears in',
  'all copies and that both that copyright notice and this permission notice appear in supporting',
  'documentation. Kevin Atkinson makes no representations about the suitability of this array for any',
  'purpose. It is provided "as is" without express or implied warranty.',
];

/** `header`: the generated file's doc comment lines (without comment markers). */
export function writeWordTable(file: string, constName: string, header: string[], words: Iterable<string>): number {
  const sorted = [...new Set(words)].sort();
  const lines: string[] = [];
  let line = ' ';
  for (const w of sorted) {
    const item = ` '${w}',`;
    if (line.length + item.length > 160) {
      lines.push(line);
      line = ' ';
    }
    line += item;
  }
  lines.push(line);
  writeFileSync(
    new URL(`../../src/tickers/${file}`, import.meta.url),
    `/**
${header.map((l) => ` *${l ? ` ${l}` : ''}`).join('\n')}
 */
// biome-ignore format: a word list reads better packed
export const ${constName}: ReadonlySet<string> = new Set([
${lines.join('\n')}
]);
`,
  );
  return sorted.length;
}
