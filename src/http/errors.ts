/**
 * Every error the service answers with: a status, a stable code, a short message and, for
 * parameter errors, the parameter and its allowed values. Serialised as
 * `{"error":{"code","message","param"?,"allowed"?}}` (DESIGN decision 7).
 */
export interface ApiError {
  status: number;
  code: string;
  message: string;
  param?: string;
  allowed?: readonly string[];
  /** Extra fields merged into the error object (e.g. the 402's human-readable offer). */
  details?: Record<string, unknown>;
}

export function apiError(status: number, code: string, message: string, extra?: Partial<ApiError>): ApiError {
  return { status, code, message, ...extra };
}

export function errorBody(err: ApiError): string {
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.param !== undefined) body.param = err.param;
  if (err.allowed !== undefined) body.allowed = err.allowed;
  return JSON.stringify({ error: { ...body, ...err.details } });
}

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: '200 OK',
  204: '204 No Content',
  308: '308 Permanent Redirect',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  413: '413 Content Too Large',
  414: '414 URI Too Long',
  429: '429 Too Many Requests',
  431: '431 Request Header Fields Too Large',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};
