/**
 * Compiles the devnet's contracts (contracts/*.sol) with the npm `solc` package and writes
 * contracts/artifacts.json: the runtime bytecode the devnet places with anvil_setCode, and
 * the ABI. Run with `npm run build:contracts` after changing a contract; a test checks that
 * the committed artifact matches the sources.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTRACTS = ['DevUSDC', 'Multicall'] as const;

export function contractsDir(): string {
  // dist/scripts/ → the package root's contracts/
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'contracts');
}

export interface Artifact {
  abi: unknown[];
  deployedBytecode: `0x${string}`;
}

export function compileContracts(): { solcVersion: string } & Record<(typeof CONTRACTS)[number], Artifact> {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string; version(): string };
  const dir = contractsDir();
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(CONTRACTS.map((c) => [`${c}.sol`, { content: readFileSync(join(dir, `${c}.sol`), 'utf8') }])),
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const result = { solcVersion: solc.version() } as { solcVersion: string } & Record<(typeof CONTRACTS)[number], Artifact>;
  for (const c of CONTRACTS) {
    const out = output.contracts[`${c}.sol`]![c]!;
    result[c] = { abi: out.abi, deployedBytecode: `0x${out.evm.deployedBytecode.object}` };
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const artifacts = compileContracts();
  writeFileSync(join(contractsDir(), 'artifacts.json'), JSON.stringify(artifacts, null, 2) + '\n');
  console.log(`contracts/artifacts.json written (solc ${artifacts.solcVersion})`);
}
