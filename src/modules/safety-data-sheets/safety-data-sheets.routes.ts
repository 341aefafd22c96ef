import type { Response } from 'express';
import { currentUser } from '../../auth/guards';
import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { memoryUpload } from '../../http/uploads';
import { parse } from '../../http/validate';
import { presentSafetyDataSheet, presentSafetyDataSheetList } from './safety-data-sheets.present';
import {
  MAX_SDS_BYTES,
  SafetyDataSheet,
  SafetyDataSheetList,
  SdsCurrentQuery,
  SdsListQuery,
  SdsParams,
  SdsPdfFile,
  SdsUploadBody,
  SdsUploadFields,
  SdsVersionParams,
} from './safety-data-sheets.schemas';
import { safetyDataSheetsService, sdsPdfHeaders, type SdsFile } from './safety-data-sheets.service';

/** One PDF of at most 20 MB (a larger one is a MulterError LIMIT_FILE_SIZE: 413) and a few short text fields. */
export const sdsUpload = memoryUpload({ fileSize: MAX_SDS_BYTES, files: 1, fields: 10, fieldSize: 1024 });

const sendSdsPdf = (res: Response, file: SdsFile) => res.set(sdsPdfHeaders(file)).send(file.data);

const notFound = { description: 'Item not found', schema: MessageBody };

/** /api/items/{id}/sds: an item's safety data sheets (issue 43). */
export function safetyDataSheetsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Items');
  const sheets = safetyDataSheetsService(db);

  api.post(
    '/items/:id/sds',
    {
      operationId: 'uploadSafetyDataSheet',
      summary: 'Add a version of the item’s safety data sheet',
      description:
        'multipart/form-data: the PDF in the field `file` (at most 20 MB), revisionDate (YYYY-MM-DD, not after today), language ' +
        '(default en) and supplierId (optional, an existing supplier). The file is checked as an invoice PDF is: it must start ' +
        'with %PDF-, end with %%EOF and its first pages be readable (400 otherwise). Earlier versions are kept. Stored in the ' +
        'database, so backups carry it. Answers 201 {id, itemId, revisionDate, language, supplierId, sizeBytes, uploadedBy, uploadedAt}.',
      access: 'manager',
      params: SdsParams,
      formBody: SdsUploadBody,
      responses: {
        201: { description: 'Stored', schema: SafetyDataSheet },
        400: {
          description:
            'Validation failed (revisionDate, language, supplierId, each named); no file; not a PDF, or a damaged one',
          schema: ValidationErrorBody,
        },
        404: notFound,
        413: { description: 'The file is larger than 20 MB', schema: MessageBody },
        422: { description: 'The PDF is too large or too complex to read', schema: MessageBody },
        429: { description: 'Three of your PDFs are already being checked', schema: MessageBody },
      },
    },
    async (req, _res, next) => {
      // 404 before reading up to 20 MB for an item that does not exist
      await sheets.assertItem(req.input.params.id);
      next();
    },
    sdsUpload.single('file'),
    async (req, res) => {
      const fields = parse(SdsUploadFields, req.body ?? {});
      const row = await sheets.upload(req.input.params.id, fields, req.file, currentUser(req).id);
      res.status(201).json(presentSafetyDataSheet(row));
    },
  );

  api.get(
    '/items/:id/sds',
    {
      operationId: 'listSafetyDataSheets',
      summary: 'The item’s safety data sheets, newest first',
      description:
        'Every version kept, by revision date then upload, newest first; the first is marked current. With ?on=YYYY-MM-DD ' +
        '(an auditor’s question: which sheet was current on that date) only the versions revised on or before that date, the ' +
        'first of them the one current then. ?language= keeps one language. Anyone signed in, requesters included.',
      access: 'any-signed-in',
      params: SdsParams,
      query: SdsListQuery,
      responses: {
        200: { description: 'Versions', schema: SafetyDataSheetList },
        400: { description: 'Invalid on or language', schema: ValidationErrorBody },
        404: notFound,
      },
    },
    async (req, res) => {
      res.json(presentSafetyDataSheetList(await sheets.list(req.input.params.id, req.input.query)));
    },
  );

  api.get(
    '/items/:id/sds/current',
    {
      operationId: 'downloadCurrentSafetyDataSheet',
      summary: 'The item’s current safety data sheet (PDF)',
      description:
        'The latest revision (then the latest upload), in ?language= when given, as application/pdf named ' +
        '<SKU>-SDS-<revisionDate>.pdf. For anyone signed in, requesters included: the sheet must be at hand for whoever uses ' +
        'the substance. 404 {message: "No safety data sheet for <SKU>"} when there is none.',
      access: 'any-signed-in',
      params: SdsParams,
      query: SdsCurrentQuery,
      responses: {
        200: { description: 'The PDF', schema: SdsPdfFile, contentType: 'application/pdf' },
        404: { description: 'Item not found, or no safety data sheet for it', schema: MessageBody },
      },
    },
    async (req, res) => {
      sendSdsPdf(res, await sheets.current(req.input.params.id, req.input.query));
    },
  );

  api.get(
    '/items/:id/sds/:sdsId',
    {
      operationId: 'downloadSafetyDataSheet',
      summary: 'One version of the item’s safety data sheet (PDF)',
      description:
        'As /current, for a version listed by GET /api/items/{id}/sds (an earlier one, for an audit). Anyone signed in: it is the same safety information.',
      access: 'any-signed-in',
      params: SdsVersionParams,
      responses: {
        200: { description: 'The PDF', schema: SdsPdfFile, contentType: 'application/pdf' },
        404: { description: 'Item not found, or no such version of its sheet', schema: MessageBody },
      },
    },
    async (req, res) => {
      const { id, sdsId } = req.input.params;
      sendSdsPdf(res, await sheets.version(id, sdsId));
    },
  );

  return api.router;
}
