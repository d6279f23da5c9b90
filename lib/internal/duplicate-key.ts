/**
 * The dot path of the first key repeated within one object of `text`, a document
 * `JSON.parse` accepted. Keys are compared after unescaping (`"k"` and `"\u006b"` are the
 * same key); array elements are numbered (`metadata.y.0.k`). One pass with an explicit
 * stack, so deep nesting cannot overflow the call stack.
 *
 * @param text - valid JSON text.
 * @returns the dot path of the repeated key (e.g. `bank`, `metadata.y.0.k`), or `undefined`.
 */
export function findDuplicateKey(text: string): string | undefined {
  interface Frame {
    readonly keys: Set<string> | undefined;
    readonly path: string;
    key: string;
    index: number;
    expectKey: boolean;
  }
  const stack: Frame[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    const top = stack.at(-1);
    if (char === '"') {
      let end = at + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys !== undefined && top.expectKey) {
        const key = JSON.parse(text.slice(at, end + 1)) as string;
        if (top.keys.has(key)) return joinPath(top.path, key);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      at = end;
    } else if (char === '{' || char === '[') {
      const path =
        top === undefined ? '' : joinPath(top.path, top.keys ? top.key : String(top.index));
      const keys = char === '{' ? new Set<string>() : undefined;
      stack.push({ keys, path, key: '', index: 0, expectKey: char === '{' });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',' && top !== undefined) {
      if (top.keys === undefined) top.index += 1;
      else top.expectKey = true;
    }
  }
  return undefined;
}

function joinPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}
