import { Router } from 'express';
import type { Deps } from '../deps';

export function counterPages(_deps: Deps): Router {
  const pages = Router();
  return pages;
}
