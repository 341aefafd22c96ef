import { readFileSync } from 'node:fs';
import path from 'node:path';

/*
 * The GHS pictograms on a label (issue 43), drawn as vectors from the SVGs the stores serves
 * (public/ghs/GHS01.svg ... GHS09.svg), so the page, the API and the label show one drawing. Those
 * files use a small part of SVG: a 100 x 100 viewBox, <g>, <polygon>, <path>, <rect> (rx),
 * <circle>, the attributes fill, stroke, stroke-width, stroke-linecap, stroke-linejoin and
 * transform (translate, scale, rotate); this reads that part and nothing else.
 */

const GHS_DIR = path.resolve(import.meta.dirname, '../../../public/ghs');

type Attrs = Record<string, string>;
type Shape = { tag: string; attrs: Attrs; transforms: string[]; style: Attrs };

const STYLE_ATTRS = ['fill', 'stroke', 'stroke-width', 'stroke-linecap', 'stroke-linejoin'];

function attrsOf(text: string): Attrs {
  const attrs: Attrs = {};
  for (const match of text.matchAll(/([\w:-]+)="([^"]*)"/g)) attrs[match[1]] = match[2];
  return attrs;
}

/** A pictogram's shapes, each with the transforms and style of the groups around it (outermost first). */
function parseSvg(svg: string): Shape[] {
  const shapes: Shape[] = [];
  const groups: { transforms: string[]; style: Attrs }[] = [{ transforms: [], style: {} }];
  for (const match of svg.matchAll(/<(\/?)(\w+)([^>]*?)(\/?)>/g)) {
    const [, closing, tag, rest, selfClosing] = match;
    const outer = groups[groups.length - 1];
    if (tag === 'g') {
      if (closing) groups.pop();
      else {
        const attrs = attrsOf(rest);
        const style = { ...outer.style };
        for (const name of STYLE_ATTRS) if (attrs[name] !== undefined) style[name] = attrs[name];
        const group = { transforms: [...outer.transforms, ...(attrs.transform ? [attrs.transform] : [])], style };
        if (!selfClosing) groups.push(group);
      }
      continue;
    }
    if (closing || !['polygon', 'path', 'rect', 'circle'].includes(tag)) continue;
    const attrs = attrsOf(rest);
    const style = { ...outer.style };
    for (const name of STYLE_ATTRS) if (attrs[name] !== undefined) style[name] = attrs[name];
    shapes.push({
      tag,
      attrs,
      transforms: [...outer.transforms, ...(attrs.transform ? [attrs.transform] : [])],
      style,
    });
  }
  return shapes;
}

const cache = new Map<string, Shape[]>();
function shapesOf(code: string): Shape[] {
  let shapes = cache.get(code);
  if (!shapes) {
    if (!/^GHS0[1-9]$/.test(code)) throw new Error(`Unknown pictogram ${code}`);
    shapes = parseSvg(readFileSync(path.join(GHS_DIR, `${code}.svg`), 'utf8'));
    cache.set(code, shapes);
  }
  return shapes;
}

type Doc = PDFKit.PDFDocument;
const num = (value: string | undefined, fallback = 0) => (value === undefined ? fallback : Number(value));

function applyTransform(doc: Doc, transform: string) {
  for (const match of transform.matchAll(/(translate|scale|rotate)\(([^)]*)\)/g)) {
    const args = match[2]
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    if (match[1] === 'translate') doc.translate(args[0], args[1] ?? 0);
    else if (match[1] === 'scale') doc.scale(args[0], args[1] ?? args[0]);
    else if (args.length === 3) doc.rotate(args[0], { origin: [args[1], args[2]] });
    else doc.rotate(args[0]);
  }
}

/**
 * Draws pictogram `code` (GHS01 to GHS09) with its 100 x 100 box's top-left corner at (x, y) and
 * `size` points wide and high: the red-bordered diamond fills 92% of the box.
 */
export function drawPictogram(doc: Doc, code: string, { x, y, size }: { x: number; y: number; size: number }): void {
  doc.save();
  doc.translate(x, y);
  doc.scale(size / 100);
  for (const shape of shapesOf(code)) {
    doc.save();
    for (const transform of shape.transforms) applyTransform(doc, transform);
    const { attrs, style } = shape;
    switch (shape.tag) {
      case 'polygon': {
        const points = attrs.points
          .trim()
          .split(/\s+/)
          .map((pair) => pair.split(',').map(Number) as [number, number]);
        doc.polygon(...points);
        break;
      }
      case 'path':
        doc.path(attrs.d);
        break;
      case 'rect':
        if (attrs.rx) doc.roundedRect(num(attrs.x), num(attrs.y), num(attrs.width), num(attrs.height), num(attrs.rx));
        else doc.rect(num(attrs.x), num(attrs.y), num(attrs.width), num(attrs.height));
        break;
      case 'circle':
        doc.circle(num(attrs.cx), num(attrs.cy), num(attrs.r));
        break;
    }
    const fill = style.fill ?? '#000';
    const stroke = style.stroke && style.stroke !== 'none' ? style.stroke : null;
    if (stroke) {
      doc.lineWidth(num(style['stroke-width'], 1));
      doc.lineCap((style['stroke-linecap'] as 'butt' | 'round' | 'square' | undefined) ?? 'butt');
      doc.lineJoin((style['stroke-linejoin'] as 'miter' | 'round' | 'bevel' | undefined) ?? 'miter');
    }
    if (fill !== 'none' && stroke) doc.fillAndStroke(fill, stroke);
    else if (fill !== 'none') doc.fill(fill);
    else if (stroke) doc.stroke(stroke);
    doc.restore();
  }
  doc.restore();
}
