// Where the gzipped bytes of an SDK bundle come from: for each source file, how much
// smaller the gzip -9 output gets when that file's code is cut out of the minified
// bundle (its marginal cost; gzip shares repeats, so the column does not sum to the total).
// Run: node bench/bundle-contributions.ts [whole client | verifyRequestSignature alone]
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { BUDGETS, bundleOptions } from './bundle-size.ts';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes one base64 VLQ source-map segment into its fields. */
function decodeSegment(segment: string): number[] {
  const fields: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = BASE64.indexOf(char);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    fields.push(value & 1 ? -(value >> 1) : value >> 1);
    value = 0;
    shift = 0;
  }
  return fields;
}

/** The source index owning each character of `code`, from the bundle's source map. */
function owners(code: string, mappings: string): Int32Array {
  const owner = new Int32Array(code.length).fill(-1);
  const lines = code.split('\n');
  const starts: [offset: number, source: number][] = [];
  let lineStart = 0;
  let source = 0;
  mappings.split(';').forEach((line, index) => {
    let column = 0;
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const [columnDelta = 0, sourceDelta] = decodeSegment(segment);
      column += columnDelta;
      if (sourceDelta !== undefined) source += sourceDelta;
      starts.push([lineStart + column, source]);
    }
    lineStart += (lines[index]?.length ?? 0) + 1;
  });
  starts.forEach(([start, src], index) => {
    owner.fill(src, start, starts[index + 1]?.[0] ?? code.length);
  });
  return owner;
}

const entry = BUDGETS.find((budget) => budget.name.startsWith(process.argv[2] ?? 'whole'));
if (entry === undefined) throw new Error(`No such entry; one of: ${BUDGETS.map((b) => b.name)}`);
const result = await build({
  ...bundleOptions(entry.source),
  sourcemap: 'external',
  outfile: 'out.js',
});
const code = result.outputFiles.find((file) => file.path.endsWith('.js'))?.text ?? '';
const map = JSON.parse(result.outputFiles.find((file) => file.path.endsWith('.map'))?.text ?? '{}');
const owner = owners(code, map.mappings);
const total = gzipSync(code, { level: 9 }).length;
const rows = (map.sources as string[]).map((name, index) => {
  let rest = '';
  let own = 0;
  for (let at = 0; at < code.length; at++) {
    if (owner[at] === index) own++;
    else rest += code[at];
  }
  return {
    name: name.replace(/^(\.\.\/)+/, ''),
    own,
    marginal: total - gzipSync(rest, { level: 9 }).length,
  };
});
console.log(`${entry.name}: ${total} B gzip -9\n`);
console.log('| file | minified B | marginal gzip B |\n|---|---|---|');
for (const row of rows.sort((a, b) => b.marginal - a.marginal).filter((r) => r.own > 0)) {
  console.log(`| ${row.name} | ${row.own} | ${row.marginal} |`);
}
