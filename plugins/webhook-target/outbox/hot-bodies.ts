/**
 * Bodies of pending rows kept in memory after a compaction moved them to a segment, up to a byte
 * budget (least recently put out first): a backlog's next attempts send them without reading the
 * segment back. Only exact stored bytes enter (staged bodies, or bodies read and checked).
 */
export class HotBodies {
  private readonly bodies = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  get(requestId: string): Buffer | undefined {
    return this.bodies.get(requestId);
  }

  put(requestId: string, body: Buffer): void {
    if (body.length > this.budget) return;
    this.delete(requestId);
    this.bodies.set(requestId, body);
    this.bytes += body.length;
    for (const [id, old] of this.bodies) {
      if (this.bytes <= this.budget) break;
      this.bodies.delete(id);
      this.bytes -= old.length;
    }
  }

  delete(requestId: string): void {
    const body = this.bodies.get(requestId);
    if (!body) return;
    this.bodies.delete(requestId);
    this.bytes -= body.length;
  }
}
