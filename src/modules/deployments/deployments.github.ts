import { z } from 'zod';
import { parse } from '../../http/validate';
import type { NotificationFields } from './deployments.schemas';

/** Only the fields read here; GitHub's payloads carry far more, and the raw payload is stored as sent. */
const Repository = z.object({ full_name: z.string() }).nullish();
const Sender = z.object({ login: z.string() }).nullish();

const PushEvent = z.object({
  ref: z.string(),
  after: z.string().nullish(),
  created: z.boolean().nullish(),
  deleted: z.boolean().nullish(),
  forced: z.boolean().nullish(),
  head_commit: z.object({ id: z.string(), message: z.string().nullish() }).nullish(),
  commits: z.array(z.unknown()).nullish(),
  pusher: z.object({ name: z.string() }).nullish(),
  repository: Repository,
  sender: Sender,
});

const ReleaseEvent = z.object({
  action: z.string(),
  release: z.object({ tag_name: z.string(), name: z.string().nullish(), target_commitish: z.string().nullish() }),
  repository: Repository,
  sender: Sender,
});

const WorkflowRunEvent = z.object({
  action: z.string(),
  workflow_run: z.object({
    name: z.string().nullish(),
    display_title: z.string().nullish(),
    head_branch: z.string().nullish(),
    head_sha: z.string(),
    status: z.string().nullish(),
    conclusion: z.string().nullish(),
  }),
  workflow: z.object({ name: z.string() }).nullish(),
  repository: Repository,
  sender: Sender,
});

const FULL_SHA = /^[0-9a-f]{40}$/i;
const NO_COMMIT = /^0{40}$/;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function pushNotification(payload: unknown): NotificationFields {
  const push = parse(PushEvent, payload);
  const actor = push.sender?.login ?? push.pusher?.name ?? null;
  const isTag = push.ref.startsWith('refs/tags/');
  const ref = push.ref.replace(/^refs\/(heads|tags)\//, '');
  const kind = isTag ? 'tag' : 'branch';
  const count = push.commits?.length ?? 0;
  const who = actor ?? 'someone';
  let summary: string;
  if (push.deleted) summary = `${who} deleted ${kind} ${ref}`;
  else if (isTag) summary = `${who} pushed tag ${ref}`;
  else if (push.created && count === 0) summary = `${who} created branch ${ref}`;
  else summary = `${who} ${push.forced ? 'force-pushed' : 'pushed'} ${plural(count, 'commit')} to ${ref}`;
  const after = push.after && !NO_COMMIT.test(push.after) ? push.after : null;
  return {
    repository: push.repository?.full_name ?? null,
    ref,
    commit: push.deleted ? null : (push.head_commit?.id ?? after),
    actor,
    summary,
    message: push.head_commit?.message ?? null,
  };
}

function releaseNotification(payload: unknown): NotificationFields {
  const { action, release, repository, sender } = parse(ReleaseEvent, payload);
  const target = release.target_commitish;
  return {
    repository: repository?.full_name ?? null,
    ref: release.tag_name,
    // target_commitish is usually a branch name; only a sha names a commit
    commit: target && FULL_SHA.test(target) ? target : null,
    actor: sender?.login ?? null,
    status: action,
    summary: `release ${release.tag_name} ${action}`,
    message: release.name ?? null,
  };
}

function workflowRunNotification(payload: unknown): NotificationFields {
  const { action, workflow_run: run, workflow, repository, sender } = parse(WorkflowRunEvent, payload);
  const name = run.name ?? workflow?.name ?? 'run';
  const completed = action === 'completed';
  return {
    repository: repository?.full_name ?? null,
    ref: run.head_branch ?? null,
    commit: run.head_sha,
    actor: sender?.login ?? null,
    status: completed ? (run.conclusion ?? 'completed') : (run.status ?? action),
    summary: completed
      ? `workflow ${name} completed: ${run.conclusion ?? 'unknown'}`
      : `workflow ${name} ${action.replace(/_/g, ' ')}`,
    message: run.display_title ?? null,
  };
}

/** The events stored as deployment notifications, each with what it yields. */
export const STORED_GITHUB_EVENTS = new Map<string, (payload: unknown) => NotificationFields>([
  ['push', pushNotification],
  ['release', releaseNotification],
  ['workflow_run', workflowRunNotification],
]);
