import fs from 'node:fs/promises';
import bwipjs from 'bwip-js/node';

/** The fake camera's picture: VGA, a few frames (Chromium plays the file in a loop). */
const WIDTH = 640;
const HEIGHT = 480;
const FRAMES = 5;
/** Light margin each side of the bars, in modules (Code 128 asks for 10). */
const QUIET_ZONE_MODULES = 12;
const BAR_HEIGHT = 240;

/**
 * A Code 128 symbol of `text` in bwip-js's own encoding: its bar and space widths in modules, bar
 * first (`sbs` of bwipjs.raw), the same symbol its PNG and the labels draw.
 */
function code128Widths(text: string): number[] {
  const [symbol] = bwipjs.raw({ bcid: 'code128', text }) as unknown as { sbs: number[] }[];
  return symbol.sbs;
}

/**
 * A video file for Chromium's fake camera (--use-file-for-fake-video-capture): YUV4MPEG2, 4:2:0,
 * full range, every frame the Code 128 barcode of `text` black on white in the middle of the
 * picture. Drawn straight from the symbol's bar widths into the luma plane; chroma is grey.
 */
export async function writeBarcodeVideo(file: string, text: string): Promise<void> {
  const widths = code128Widths(text);
  const modules = widths.reduce((sum, width) => sum + width, 0) + 2 * QUIET_ZONE_MODULES;
  const moduleWidth = Math.floor(WIDTH / modules);
  if (moduleWidth < 2) throw new Error(`'${text}' is too long a barcode for a ${WIDTH} px picture`);

  const luma = Buffer.alloc(WIDTH * HEIGHT, 255);
  const row = Buffer.alloc(WIDTH, 255);
  let x = Math.floor((WIDTH - (modules - 2 * QUIET_ZONE_MODULES) * moduleWidth) / 2);
  widths.forEach((width, i) => {
    const pixels = width * moduleWidth;
    if (i % 2 === 0) row.fill(0, x, x + pixels); // bars at even places, spaces at odd
    x += pixels;
  });
  const top = Math.floor((HEIGHT - BAR_HEIGHT) / 2);
  for (let y = top; y < top + BAR_HEIGHT; y += 1) row.copy(luma, y * WIDTH);
  const chroma = Buffer.alloc((WIDTH / 2) * (HEIGHT / 2), 128);
  const frame = Buffer.concat([Buffer.from('FRAME\n'), luma, chroma, chroma]);

  const header = Buffer.from(`YUV4MPEG2 W${WIDTH} H${HEIGHT} F10:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n`);
  await fs.writeFile(file, Buffer.concat([header, ...Array.from({ length: FRAMES }, () => frame)]));
}
