/** Reads a stream up to `limit` bytes; past the limit the rest is discarded and the stream destroyed. */
export async function readClamped(stream: AsyncIterable<Uint8Array>, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const room = limit - size;
    if (chunk.length > room) {
      if (room > 0) chunks.push(Buffer.from(chunk.subarray(0, room)));
      size = limit;
      return { bytes: Buffer.concat(chunks, size), truncated: true };
    }
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks, size), truncated: false };
}
