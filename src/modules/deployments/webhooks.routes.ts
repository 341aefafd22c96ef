import { raw, type Request, type RequestHandler } from 'express';
import typeis from 'type-is';
import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { BadRequest, ServiceUnavailable, Unauthorized, UnsupportedMediaType } from '../../http/errors';
import { refuseDeepJson } from '../../http/json-body';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { presentDeploymentNotification, presentIgnoredEvent, presentPing } from './deployments.present';
import { DeploymentNotification, GitHubDeliveryAnswer, GitHubPayload, WatchtowerPayload } from './deployments.schemas';
import { deploymentNotificationsService } from './deployments.service';
import { STORED_GITHUB_EVENTS } from './deployments.github';
import { watchtowerNotification } from './deployments.watchtower';
import { githubSignatureMatches, secretMatches } from './webhooks.auth';

// The signature covers the bytes as sent, so the body is read raw here and parsed only once verified.
const readRawBody = raw({ type: () => true, limit: '1mb' });

function bodyText(body: Buffer): string {
  if (body.length === 0) throw BadRequest('Request body is empty');
  return body.toString('utf8');
}

function parseJson(text: string): unknown {
  refuseDeepJson(text);
  try {
    return JSON.parse(text);
  } catch {
    throw BadRequest('Malformed JSON in request body');
  }
}

const rawBody = (req: Request): Buffer => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
const isJson = (contentType: string | undefined) =>
  Boolean(contentType && typeis.is(contentType, ['application/json']));
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const WATCHTOWER_SETUP =
  'Setup (Watchtower 1.7+, whose shoutrrr 0.8 can add headers): ' +
  '`WATCHTOWER_NOTIFICATIONS=shoutrrr` and ' +
  '`WATCHTOWER_NOTIFICATION_URL=generic://<host>[:<port>]/api/webhook/watchtower?template=json&@Authorization=Bearer%20<WEBHOOK_SECRET>` ' +
  '(add `&disabletls=yes` when the service is reached over plain http). Use the `generic://` form: with `generic+https://` ' +
  'shoutrrr forwards `template=json` to this URL instead of applying it and sends its plain text labelled application/json, ' +
  'which is refused as malformed JSON. Optionally `WATCHTOWER_NOTIFICATION_REPORT=true` for one line per container. ' +
  'The secret travels in a URL there: choose one of URL-safe characters (e.g. `openssl rand -hex 32`).';

const GITHUB_SETUP =
  'Setup: in the repository (or organisation) Settings → Webhooks → Add webhook: Payload URL `https://<host>/api/webhook/github`, ' +
  'Content type `application/json`, Secret = WEBHOOK_SECRET, SSL verification enabled, ' +
  '"Let me select individual events": Pushes, Releases, Workflow runs. GitHub sends a ping when the hook is saved.';

/**
 * POST /api/webhook/*: mounted before the JSON parser, the bearer-token and session middleware,
 * so the signature is checked over the raw body bytes and the webhook secret is never taken
 * for a user's API token.
 */
export function webhookRoutes({ db, docs, config }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Webhooks');
  const notifications = deploymentNotificationsService(db);

  const webhookSecret = (): string => {
    if (!config.webhookSecret) throw ServiceUnavailable('Webhooks are disabled: WEBHOOK_SECRET is not configured');
    return config.webhookSecret;
  };
  const requireWebhookSecret: RequestHandler = (_req, _res, next) => {
    webhookSecret();
    next();
  };
  // checked before the body is read: an unauthenticated sender gets nothing buffered
  const requireBearerSecret: RequestHandler = (req, _res, next) => {
    const secret = webhookSecret();
    const token = /^Bearer\s+(.+?)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!token) return next(Unauthorized('Authorization: Bearer <WEBHOOK_SECRET> required'));
    if (!secretMatches(token, secret)) return next(Unauthorized('Invalid webhook secret'));
    next();
  };
  const disabled = { description: 'WEBHOOK_SECRET is not configured', schema: MessageBody };
  const stored = { description: 'Stored', schema: DeploymentNotification };

  api.post(
    '/webhook/watchtower',
    {
      operationId: 'receiveWatchtowerNotification',
      summary: 'Receive a deployment notification from Watchtower',
      description:
        'Authentication: `Authorization: Bearer <WEBHOOK_SECRET>` (not a user token). Body up to 1 MB, application/json or text/plain ' +
        '(the text is the message). Stores one notification and answers 201 with it. Recognised: the fields service (or container), ' +
        "image (name or name:tag), tag, status, host and message; shoutrrr's JSON template {title, message}, the host taken from a title " +
        '"Watchtower updates on <host>"; Watchtower\'s json.v1 template (report.failed/updated: name, imageName; entries[].message); ' +
        'and in the message text the report lines "- <container> (<image:tag>): <id> updated to <id>" and "- <container> (<image>): Failed: ..." ' +
        'and the log lines "Found new <image:tag> image (<id>)", "Creating /<container>", \'Unable to update container "/<container>"\'. ' +
        'status is updated or failed; when several containers are named, the fields describe the first failed one, else the first updated one, ' +
        'and the message keeps the whole text. The raw payload is stored too.\n\n' +
        WATCHTOWER_SETUP,
      access: 'public',
      rawBody: true,
      body: WatchtowerPayload,
      responses: {
        201: stored,
        400: {
          description: 'Empty body, malformed JSON, or JSON that is neither an object nor a string',
          schema: MessageBody,
        },
        401: { description: 'Missing or wrong secret', schema: MessageBody },
        413: { description: 'Body over 1 MB', schema: MessageBody },
        415: { description: 'Neither application/json nor text/plain', schema: MessageBody },
        503: disabled,
      },
    },
    requireBearerSecret,
    readRawBody,
    async (req, res) => {
      const contentType = req.get('content-type');
      const text = bodyText(rawBody(req));
      let body: Record<string, unknown> | string;
      let payloadJson = text;
      if (isJson(contentType)) {
        const json = parseJson(text);
        if (!isObject(json) && typeof json !== 'string') throw BadRequest('Expected a JSON object or string');
        body = json;
      } else if (!contentType || typeis.is(contentType, ['text/plain'])) {
        body = text;
        payloadJson = JSON.stringify(text);
      } else {
        throw UnsupportedMediaType('Content-Type must be application/json or text/plain');
      }
      const { notification } = await notifications.record({
        source: 'watchtower',
        event: 'notification',
        payloadJson,
        ...watchtowerNotification(body),
      });
      res.status(201).json(presentDeploymentNotification(notification));
    },
  );

  api.post(
    '/webhook/github',
    {
      operationId: 'receiveGitHubEvent',
      summary: 'Receive a repository event from GitHub',
      description:
        'Authentication: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the body bytes as sent, keyed with WEBHOOK_SECRET; ' +
        '401 when it is missing, malformed or does not match. Content type application/json only (415 for the form-encoded option); ' +
        'body up to 1 MB. By X-GitHub-Event: `ping` answers 200 {message} and stores nothing; `push`, `release` and `workflow_run` ' +
        'are stored (repository = full_name, ref = branch or tag name, commit = push: head commit, release: target_commitish when it is a sha, ' +
        'workflow_run: head_sha; actor = sender.login; status = release action or run conclusion/status; summary, e.g. ' +
        '"alice pushed 3 commits to main", "release v1.2.0 published", "workflow CI completed: success") and answered 201; ' +
        'any other event answers 202 {message} and stores nothing. A redelivery (an X-GitHub-Delivery already stored) stores nothing ' +
        'and answers 200 with the record stored the first time. The raw payload is stored too.\n\n' +
        GITHUB_SETUP,
      access: 'public',
      rawBody: true,
      body: GitHubPayload,
      responses: {
        200: {
          description: 'Ping answered, or a redelivery: the record stored the first time',
          schema: GitHubDeliveryAnswer,
        },
        201: stored,
        202: { description: 'Event ignored', schema: MessageBody },
        400: {
          description:
            'Empty or malformed body, missing X-GitHub-Event, or a payload without the fields its event needs',
          schema: ValidationErrorBody,
        },
        401: { description: 'Missing, malformed or wrong signature', schema: MessageBody },
        413: { description: 'Body over 1 MB', schema: MessageBody },
        415: { description: 'Not application/json', schema: MessageBody },
        503: disabled,
      },
    },
    requireWebhookSecret,
    readRawBody,
    async (req, res) => {
      const signature = req.get('x-hub-signature-256');
      if (!signature) throw Unauthorized('X-Hub-Signature-256 header required');
      const body = rawBody(req);
      if (!githubSignatureMatches(body, signature, webhookSecret())) throw Unauthorized('Invalid signature');
      if (!isJson(req.get('content-type'))) {
        throw UnsupportedMediaType(
          'Content type must be application/json: choose application/json in the GitHub webhook settings',
        );
      }
      const event = req.get('x-github-event');
      if (!event) throw BadRequest('X-GitHub-Event header required');
      const text = bodyText(body);
      const payload = parseJson(text);
      if (!isObject(payload)) throw BadRequest('Expected a JSON object');

      if (event === 'ping') {
        res.json(presentPing([...STORED_GITHUB_EVENTS.keys()]));
        return;
      }
      const fieldsOf = STORED_GITHUB_EVENTS.get(event);
      if (!fieldsOf) {
        res.status(202).json(presentIgnoredEvent(event));
        return;
      }
      const { notification, created } = await notifications.record({
        source: 'github',
        event,
        deliveryId: req.get('x-github-delivery') ?? null,
        payloadJson: text,
        ...fieldsOf(payload),
      });
      res.status(created ? 201 : 200).json(presentDeploymentNotification(notification));
    },
  );

  return api.router;
}
