/**
 * Assembles the client package (packages/client) from the compiled tree: the files its entry
 * points import, followed through relative imports in both the JavaScript and the type
 * declarations, copied under packages/client/dist with their layout kept (dist/src/client/x.js
 * → packages/client/dist/client/x.js), so the catalogue and the other shared modules stay one
 * source. Refuses to build when a compiled file imports a package the client's package.json
 * does not list, when it lists one nothing imports, or when a listed range differs from the
 * service's own (one lock file resolves both).
 *
 * Part of `npm run build` (`npm run build:client` alone); then `npm pack` in packages/client
 * makes the tarball. The checkout's own `npx --no-install wires` runs this built copy (the root
 * package.json declares packages/client as a workspace).
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMPILED = join(ROOT, 'dist', 'src');
export const CLIENT_DIR = join(ROOT, 'packages', 'client');
const ENTRIES = ['client/index.js', 'client/cli.js', 'client/mcp-stdio.js'];

interface PackageJson {
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const IMPORT = /(?:^|[;\s])(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The package a bare specifier names: `ws`, `@noble/curves/secp256k1.js` → `@noble/curves`. */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

/** Every compiled file the entries reach (relative to dist/src), and the packages they import. */
export function clientFiles(): { files: string[]; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [...ENTRIES];
  while (queue.length) {
    const js = queue.pop()!;
    if (files.has(js)) continue;
    const path = join(COMPILED, js);
    if (!existsSync(path)) throw new Error(`${js} is not compiled: run tsc first`);
    files.add(js);
    const dts = js.replace(/\.js$/, '.d.ts');
    const sources = [readFileSync(path, 'utf8')];
    if (existsSync(join(COMPILED, dts))) {
      files.add(dts);
      sources.push(readFileSync(join(COMPILED, dts), 'utf8'));
    }
    for (const text of sources) {
      for (const m of text.matchAll(IMPORT)) {
        const spec = (m[1] ?? m[2])!;
        if (spec.startsWith('.')) queue.push(relative(COMPILED, resolve(dirname(path), spec)));
        else if (!spec.startsWith('node:') && !builtinModules.includes(spec)) packages.add(packageOf(spec));
      }
    }
  }
  return { files: [...files].sort(), packages };
}

/** Problems with the client's declared dependencies; empty when they are exactly what it imports. */
export function dependencyProblems(packages: Set<string>): string[] {
  const client = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as PackageJson;
  const service = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
  const declared = client.dependencies ?? {};
  const problems: string[] = [];
  for (const p of packages) if (!declared[p]) problems.push(`the client imports ${p}, which packages/client/package.json does not list`);
  for (const [p, range] of Object.entries(declared)) {
    if (!packages.has(p)) problems.push(`packages/client/package.json lists ${p}, which the client does not import`);
    const own = service.dependencies?.[p] ?? service.devDependencies?.[p];
    if (own !== range) problems.push(`${p}: the client asks for ${range}, the service's package.json for ${own ?? 'nothing'}`);
  }
  return problems;
}

export function buildClient(): string[] {
  const { files, packages } = clientFiles();
  const problems = dependencyProblems(packages);
  if (problems.length) throw new Error(problems.join('\n'));
  const out = join(CLIENT_DIR, 'dist');
  rmSync(out, { recursive: true, force: true });
  for (const file of files) {
    mkdirSync(dirname(join(out, file)), { recursive: true });
    if (file.endsWith('.js')) {
      // The source maps point into this repository's src/, which the package does not carry.
      writeFileSync(join(out, file), readFileSync(join(COMPILED, file), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'));
    } else copyFileSync(join(COMPILED, file), join(out, file));
  }
  // npm makes the bins executable when it links them; in this checkout's workspace it linked
  // them before they were built.
  const { bin = {} } = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as PackageJson;
  for (const path of Object.values(bin)) chmodSync(join(CLIENT_DIR, path), 0o755);
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = buildClient();
  console.log(`packages/client/dist: ${files.length} files`);
}
