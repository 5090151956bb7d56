/** The client module: `import { WiresClient } from '@wires-service/client'`. */
export { WiresClient, WiresError, type Article, type CallResult, type ClientOptions, type Envelope, type WireParams } from './client.js';
export { WireStream, type StreamEvent, type StreamItem, type StreamOptions } from './stream.js';
export type { WireData, WireFacets, WireFilters, WireId } from './wires.gen.js';
