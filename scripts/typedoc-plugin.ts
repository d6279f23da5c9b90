// A TypeDoc plugin (typedoc.json "plugin") that drops one false warning and keeps every
// other. valibot's input types (`v.InferInput` of an object schema) build each property
// from an intersection of two mapped types over the same entries, so TypeScript lists the
// entry's one declaration twice. When TypeDoc expands such a type (a method's `params`), it
// finds the one doc comment twice and warns "has multiple declarations with a comment",
// then lists the same file and line twice. A warning whose listed places are all one place
// is that case and nothing else; it is dropped. Any other is printed as TypeDoc wrote it
// (and fails `npm run docs`, which treats warnings as errors).
import type { Application } from 'typedoc';

const MULTIPLE = 'has multiple declarations with a comment';

/**
 * Installs the filter on TypeDoc's logger: the multiple-declarations warning is held until
 * the info line that follows it names the places, then printed unless they are one place.
 *
 * @param app - the TypeDoc application loading the plugin.
 */
export function load(app: Application): void {
  const { logger } = app;
  // warn has overloads (a message with or without a source position): passed on as given.
  const warn = logger.warn.bind(logger) as (...args: unknown[]) => void;
  const info = logger.info.bind(logger);
  let held: unknown[] | undefined;
  const release = () => {
    if (held !== undefined) warn(...held);
    held = undefined;
  };
  logger.warn = ((...args: unknown[]) => {
    release();
    if (String(args[0]).includes(MULTIPLE)) held = args;
    else warn(...args);
  }) as typeof logger.warn;
  logger.info = (text: Parameters<typeof info>[0]) => {
    if (held !== undefined) {
      // "The comments for <name> are declared at:\n\t<file:line>\n\t<file:line>..."
      const places = String(text)
        .split('\n')
        .slice(1)
        .map((line) => line.trim());
      if (places.length > 1 && places.every((place) => place === places[0])) {
        held = undefined;
        return;
      }
      release();
    }
    info(text);
  };
}
