import path from 'node:path';

/**
 * The relative links of the Markdown files and the anchors they point at, checked the way GitHub
 * renders them. No Markdown parser is among the dependencies, so this reads only what links need:
 * fenced code and code spans (never links), inline links and images, reference definitions, ATX
 * and setext headings, and HTML ids.
 */

/** What a check reads of the repository: whether a path exists, and a Markdown file's text. */
export type MarkdownFiles = { exists(file: string): boolean; read(file: string): string };

/** A link as written, with its 1-based line. */
export type MarkdownLink = { line: number; target: string };

/** The text with fenced code blocks and code spans blanked out, newlines kept so lines still count. */
function withoutCode(markdown: string): string {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const prose = lines.map((line) => {
    // a fence's run and what follows it: an info string, or nothing on a closing fence
    const run = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      if (run && run[1][0] === fence[0] && run[1].length >= fence.length && !run[2].trim()) fence = undefined;
      return '';
    }
    if (run && !(run[1][0] === '`' && run[2].includes('`'))) {
      fence = run[1];
      return '';
    }
    return line;
  });
  // a code span closes on a backtick run of its opening's length, possibly lines later but within its paragraph
  return prose
    .join('\n')
    .replace(/(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n)[\s\S])*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, ' '));
}

/** The destination after `](`: `<...>`, or up to a space or the `)` that balances the parentheses. */
function destinationAt(text: string, start: number): string {
  let i = start;
  while (text[i] === ' ' || text[i] === '\t') i += 1;
  if (text[i] === '<') {
    const end = text.indexOf('>', i);
    return end < 0 ? '' : text.slice(i + 1, end);
  }
  let depth = 0;
  let target = '';
  for (; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      target += text[i + 1];
      i += 1;
      continue;
    }
    if (/\s/.test(c)) break;
    if (c === '(') depth += 1;
    if (c === ')') {
      if (depth === 0) break;
      depth -= 1;
    }
    target += c;
  }
  return target;
}

/** Every inline link and image and every reference definition outside code. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const text = withoutCode(markdown);
  const lineAt = (index: number) => text.slice(0, index).split('\n').length;
  const links: MarkdownLink[] = [];
  for (const match of text.matchAll(/\]\(/g)) {
    const target = destinationAt(text, match.index + 2);
    if (target) links.push({ line: lineAt(match.index), target });
  }
  for (const match of text.matchAll(/^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?/gm)) {
    links.push({ line: lineAt(match.index), target: match[1] });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** GitHub's anchor of a heading's text (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const plain = heading
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*/g, '')
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1')
    .trim();
  return plain
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings' slugs (repeats numbered -1, -2, ... as GitHub does) and HTML ids. */
export function markdownAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const add = (heading: string) => {
    const slug = githubSlug(heading);
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n += 1) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  };
  const lines = markdown.split('\n');
  const prose = withoutCode(markdown).split('\n');
  prose.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) return add(lines[i].replace(/^ {0,3}#{1,6}[ \t]*/, '').replace(/(?:[ \t]+#+)?[ \t]*$/, ''));
    const previous = prose[i - 1];
    const paragraph = previous?.trim() && !/^ {0,3}(#|[-*+>|]|\d+[.)])/.test(previous);
    if (paragraph && /^ {0,3}(=+|-+)[ \t]*$/.test(line)) add(lines[i - 1].trim());
  });
  for (const match of withoutCode(markdown).matchAll(/<[a-z][^>]*\s(?:id|name)="([^"]+)"/gi)) anchors.add(match[1]);
  return anchors;
}

/**
 * The broken relative links of one Markdown file (a repository path, `/`-separated): a target
 * that does not exist, or an anchor the target Markdown file has no heading for. Links with a
 * scheme (https:, mailto:) are another site's and left alone.
 */
export function brokenLinks(file: string, markdown: string, files: MarkdownFiles): string[] {
  const broken: string[] = [];
  for (const { line, target } of markdownLinks(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
    const hash = target.indexOf('#');
    const linkPath = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved = linkPath
      ? path.posix.normalize(
          linkPath.startsWith('/') ? linkPath.slice(1) : path.posix.join(path.posix.dirname(file), linkPath),
        )
      : file;
    const where = `${file}:${line} ${target}`;
    if (resolved.startsWith('../') || !files.exists(resolved)) {
      broken.push(`${where}: no file ${resolved}`);
    } else if (anchor !== undefined && resolved.endsWith('.md') && !markdownAnchors(files.read(resolved)).has(anchor)) {
      broken.push(`${where}: ${resolved} has no heading #${anchor}`);
    }
  }
  return broken;
}
