import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokenLinks, githubSlug, markdownAnchors, markdownLinks, type MarkdownFiles } from '../helpers/markdown-links';

const ROOT = path.join(import.meta.dirname, '..', '..');

const repository: MarkdownFiles = {
  exists: (file) => existsSync(path.join(ROOT, file)),
  read: (file) => readFileSync(path.join(ROOT, file), 'utf8'),
};

/** The documentation: README, the changelog and every page under docs/, as repository paths. */
const DOCUMENTATION = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('the documentation links', () => {
  // One test over every file (not it.each): the MCP unit runs count a file's tests by its it( lines.
  it('every relative link and anchor of README, the changelog and docs/*.md resolves', () => {
    expect(DOCUMENTATION.flatMap((file) => brokenLinks(file, repository.read(file), repository))).toEqual([]);
  });

  it('reads links to files and anchors in README and the docs (the check has something to check)', () => {
    const readmeLinks = markdownLinks(repository.read('README.md')).map((link) => link.target);
    expect(readmeLinks).toEqual(expect.arrayContaining(['docs/pages.md', '.env.example', '#tests']));
    const anchored = DOCUMENTATION.flatMap((file) => markdownLinks(repository.read(file))).filter((link) =>
      /\.md#/.test(link.target),
    );
    expect(anchored.length).toBeGreaterThan(3);
  });
});

describe('README, a quick start', () => {
  it('is at most 300 lines: the summary, quick start, demo data, tests and the index of the pages the rest moved to', () => {
    const readme = repository.read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    const headings = readme.split('\n').filter((line) => line.startsWith('## '));
    expect(headings).toEqual(
      expect.arrayContaining(['## Quick start', '## Demo data', '## Tests', '## Documentation']),
    );
    const targets = markdownLinks(readme).map((link) => link.target.replace(/#.*$/, ''));
    expect(targets).toEqual(
      expect.arrayContaining([
        'docs/pages.md',
        'docs/workflows.md',
        'docs/integrations.md',
        'docs/performance.md',
        '.env.example',
      ]),
    );
  });
});

describe('the link check', () => {
  const fixture: Record<string, string> = {
    'README.md': '# Stores\n\n## Quick start\n',
    'docs/guide.md': [
      '# Guide',
      '',
      '## Item barcodes and the code lookup (issue 31)',
      '',
      'See [the quick start](../README.md#quick-start), [a section](#item-barcodes-and-the-code-lookup-issue-31),',
      '![a picture](screenshots/counter.png) and [the site](https://example.org/missing.md#nowhere).',
      '',
      'A broken file: [setup](setup.md). A broken anchor: [tests](../README.md#tests).',
      'A link that leaves the repository: [up](../../elsewhere.md).',
      '',
      'In code, not links: `[x](missing.md)` and',
      '',
      '```md',
      '[y](missing-too.md)',
      '```',
    ].join('\n'),
    'docs/screenshots/counter.png': '',
  };
  const files: MarkdownFiles = { exists: (file) => file in fixture, read: (file) => fixture[file] };

  it('reports a missing file, a missing anchor and a link out of the repository, with their lines, and nothing else', () => {
    expect(brokenLinks('docs/guide.md', fixture['docs/guide.md'], files)).toEqual([
      'docs/guide.md:8 setup.md: no file docs/setup.md',
      'docs/guide.md:8 ../README.md#tests: README.md has no heading #tests',
      'docs/guide.md:9 ../../elsewhere.md: no file ../elsewhere.md',
    ]);
  });

  it("takes GitHub's slugs: lower case, punctuation dropped, each space a hyphen, repeats numbered", () => {
    expect(githubSlug("Researchers' requests")).toBe('researchers-requests');
    expect(githubSlug('At ten times the data (issue 34): `npm run bench -- scale`, 2026-11-27')).toBe(
      'at-ten-times-the-data-issue-34-npm-run-bench----scale-2026-11-27',
    );
    expect(githubSlug('The **scanner** floor: [labels](x.md) & snake_case')).toBe(
      'the-scanner-floor-labels--snake_case',
    );
    expect([
      ...markdownAnchors('# Notes\n\n## Notes\n\nSetext\n---\n\n```\n# not a heading\n```\n<a id="here"></a>'),
    ]).toEqual(['notes', 'notes-1', 'setext', 'here']);
  });
});
