/** A supertest parser that keeps a response body as bytes: `.buffer(true).parse(binaryBody)`. */
export function binaryBody(res: NodeJS.ReadableStream, done: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}
