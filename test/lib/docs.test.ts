/**
 * Every public export of the package (`edgepay`, `edgepay/testing`) and every public
 * member of an exported class carries a docstring (developers' guide, Standards).
 * Read with the TypeScript compiler, as an editor shows them.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ENTRIES = ['lib/index.ts', 'lib/testing/index.ts'];

function undocumented(): string[] {
  const program = ts.createProgram(ENTRIES, {
    allowImportingTsExtensions: true,
    noEmit: true,
    target: ts.ScriptTarget.ESNext,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.esnext.d.ts', 'lib.webworker.d.ts'],
  });
  const checker = program.getTypeChecker();
  const docOf = (symbol: ts.Symbol) =>
    ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  const missing: string[] = [];
  for (const entry of ENTRIES) {
    const source = program.getSourceFile(entry);
    const module = source && checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`cannot read ${entry}`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol =
        exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const name = exported.getName();
      if (docOf(symbol) === '') missing.push(`${entry}: ${name}`);
      if (!(symbol.flags & ts.SymbolFlags.Class)) continue;
      for (const member of checker.getDeclaredTypeOfSymbol(symbol).getProperties()) {
        const declaration = member.declarations?.[0];
        // Members declared by this class in lib/ (inherited ones are checked on their own class).
        if (
          declaration === undefined ||
          member.getName() === 'name' ||
          member.getName().startsWith('#') ||
          (declaration.parent as ts.ClassDeclaration).name?.text !== symbol.getName() ||
          !declaration.getSourceFile().fileName.includes('/lib/') ||
          ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Private
        ) {
          continue;
        }
        if (docOf(member) === '') missing.push(`${entry}: ${name}.${member.getName()}`);
      }
    }
  }
  return missing;
}

describe('docstrings', () => {
  // Builds a whole TypeScript program: about 3 s alone, past vitest's 5 s default on a busy machine.
  it('should document every public export and every public member of exported classes', {
    timeout: 60_000,
  }, () => {
    expect(undocumented()).toEqual([]);
  });
});
