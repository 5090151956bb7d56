/** The glibc this process runs on, as Node reports it. */
export function hostGlibc(): readonly [number, number] | null {
  const header = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header;
  const m = /^(\d+)\.(\d+)/.exec(header.glibcVersionRuntime ?? '');
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** Whether the uWebSockets.js release binaries (linked against glibc 2.38) cannot load here. */
export function glibcBelow238(): boolean {
  const v = hostGlibc();
  return v !== null && (v[0] < 2 || (v[0] === 2 && v[1] < 38));
}
