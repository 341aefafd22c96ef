import type { NotificationFields } from './deployments.schemas';

/*
 * What Watchtower sends, through shoutrrr's generic service:
 * - its notification text: the session's log lines ("Found new ghcr.io/acme/stores:1.4 image (0123456789ab)",
 *   "Creating /stores", 'Unable to update container "/stores": ...'), or with WATCHTOWER_NOTIFICATION_REPORT
 *   the report ("- stores (ghcr.io/acme/stores:1.4): 0123456789ab updated to fedcba987654", "- stores (...): Failed: ...");
 * - with template=json, that text wrapped as {title, message}; the title is "Watchtower updates on <host>";
 * - with WATCHTOWER_NOTIFICATION_TEMPLATE=json.v1, {title, host, report: {updated: [...], failed: [...]}, entries: [{message}]}.
 * Other senders may give service (or container), image, tag, status and host directly.
 */

type Extracted = Required<
  Pick<NotificationFields, 'service' | 'image' | 'tag' | 'status' | 'host' | 'message' | 'summary'>
>;
type Container = { service: string | null; imageRef: string | null; status: 'updated' | 'failed' };

const SUMMARY_MAX = 200;
const TITLE_HOST = /Watchtower updates on (\S+)/;
const REPORT_FAILED = /^- (\S+) \((\S+)\): Failed\b/m;
const REPORT_UPDATED = /^- (\S+) \((\S+)\): \S+ updated to \S+/m;
const LOG_UNABLE = /Unable to update container "\/?([^"]+)"/;
const LOG_FOUND = /Found new (\S+) image \(/;
const LOG_CREATING = /^Creating \/?(\S+)/gm;

const text = (value: unknown): string | null => {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
};
const containerName = (name: string) => name.replace(/^\//, '');

/** "ghcr.io/acme/stores:1.4@sha256:..." is image ghcr.io/acme/stores, tag 1.4; a registry port is not a tag. */
function splitImageRef(ref: string): { image: string; tag: string | null } {
  const withoutDigest = ref.split('@')[0];
  const colon = withoutDigest.lastIndexOf(':');
  if (colon > withoutDigest.lastIndexOf('/'))
    return { image: withoutDigest.slice(0, colon), tag: withoutDigest.slice(colon + 1) };
  return { image: withoutDigest, tag: null };
}

/** A failure outranks an update: the record is about the container that needs attention. */
function containerFromText(message: string): Container | null {
  const failed = REPORT_FAILED.exec(message);
  if (failed) return { service: containerName(failed[1]), imageRef: failed[2], status: 'failed' };
  const unable = LOG_UNABLE.exec(message);
  if (unable) return { service: containerName(unable[1]), imageRef: null, status: 'failed' };
  const updated = REPORT_UPDATED.exec(message);
  if (updated) return { service: containerName(updated[1]), imageRef: updated[2], status: 'updated' };
  const found = LOG_FOUND.exec(message);
  if (!found) return null;
  // the log names the image and the container on separate lines: pair them only when one container was recreated
  const created = [...message.matchAll(LOG_CREATING)];
  return { service: created.length === 1 ? created[0][1] : null, imageRef: found[1], status: 'updated' };
}

function containerFromReport(report: unknown): Container | null {
  if (report === null || typeof report !== 'object') return null;
  const first = (key: 'failed' | 'updated') => {
    const list = (report as Record<string, unknown>)[key];
    const entry = Array.isArray(list) ? (list[0] as Record<string, unknown> | undefined) : undefined;
    if (!entry || typeof entry !== 'object') return null;
    const name = text(entry.name);
    return { service: name && containerName(name), imageRef: text(entry.imageName), status: key };
  };
  return first('failed') ?? first('updated');
}

function messageOf(body: Record<string, unknown>): string | null {
  const message = text(body.message);
  if (message || !Array.isArray(body.entries)) return message;
  return text(
    body.entries
      .map((entry) => text((entry as Record<string, unknown> | null)?.message))
      .filter(Boolean)
      .join('\n'),
  );
}

function summarise(fields: Omit<Extracted, 'summary'>, title: string | null): string | null {
  const who = fields.service ?? (fields.image && (fields.tag ? `${fields.image}:${fields.tag}` : fields.image));
  const line =
    who && fields.status
      ? `${who} ${fields.status}${fields.host ? ` on ${fields.host}` : ''}`
      : (fields.message?.split('\n')[0] ?? title);
  return line && line.slice(0, SUMMARY_MAX);
}

/** The fields of a Watchtower notification: a JSON object, or the plain text of its message. */
export function watchtowerNotification(body: Record<string, unknown> | string): Extracted {
  const fields: Record<string, unknown> = typeof body === 'string' ? {} : body;
  const message = typeof body === 'string' ? text(body) : messageOf(body);
  const title = text(fields.title);
  const container = containerFromReport(fields.report) ?? (message ? containerFromText(message) : null);

  const imageRef = text(fields.image) ?? container?.imageRef ?? null;
  const { image, tag: tagOfImage } = imageRef ? splitImageRef(imageRef) : { image: null, tag: null };
  const service = text(fields.service) ?? text(fields.container);
  const extracted = {
    service: service ? containerName(service) : (container?.service ?? null),
    image,
    tag: text(fields.tag) ?? tagOfImage,
    status: text(fields.status)?.toLowerCase() ?? container?.status ?? null,
    host: text(fields.host) ?? (title && TITLE_HOST.exec(title)?.[1]) ?? null,
    message,
  };
  return { ...extracted, summary: summarise(extracted, title) };
}
