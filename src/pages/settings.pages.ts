import { Router } from 'express';
import type { Deps } from '../deps';

// Being built in this session (issue 19): replaced by the area's pages.
export function settingsPages(_deps: Deps): Router {
  return Router();
}
