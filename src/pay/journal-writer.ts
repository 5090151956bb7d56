/**
 * The journal's writer thread. The serving thread posts lines; this thread drains every line
 * waiting, writes them with one write and one fdatasync, and acknowledges the batch. Doing
 * the sync here, blocking, costs one disk sync per batch and no thread-pool round trips; the
 * serving thread never blocks on the disk.
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';

interface Batch {
  seq: number;
  text: string;
}

const port = parentPort!;
const fd = openSync((workerData as { path: string }).path, 'a');

port.on('message', (first: Batch | 'close') => {
  if (first === 'close') {
    closeSync(fd);
    port.close();
    return;
  }
  let text = first.text;
  let seq = first.seq;
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
    const m = next.message as Batch | 'close';
    if (m === 'close') break;
    text += m.text;
    seq = m.seq;
  }
  try {
    writeSync(fd, text);
    fdatasyncSync(fd);
    port.postMessage({ seq });
  } catch (err) {
    port.postMessage({ seq, error: String(err) });
  }
});
