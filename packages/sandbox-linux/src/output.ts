import type { Readable } from 'node:stream';

/** Keeps the first `limit` bytes of a stream and drains the rest, so the writer never blocks. */
export class BoundedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(readonly limit: number) {}

  attach(stream: Readable | null | undefined): void {
    stream?.on('data', (d: Buffer) => this.push(d));
  }

  push(d: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const part = d.length > room ? d.subarray(0, room) : d;
    if (part.length < d.length) this.truncated = true;
    this.chunks.push(part);
    this.size += part.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
