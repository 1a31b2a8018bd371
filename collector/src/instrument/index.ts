// Instrumentation helpers of the collector library: they turn the host's integration calls into
// observations of a Collector (collector/src/types.ts). Node built-ins only; no framework is
// imported. A collector stands for one Integration, so its direction and protocol decide what a
// helper records:
//
// | helper                          | records with                          | otherwise                          |
// |---------------------------------|---------------------------------------|------------------------------------|
// | instrumentFetch, observeFetch   | outbound `http-api` (payload response) | pass-through, nothing recorded     |
// | fastifyCollector, expressCollector | inbound `http-webhook` (message)    | pass-through, nothing recorded     |
// | observeQueue, observeFeed       | any (payloadLocation `message`, or `request` for `http-api`) | —  |
//
// Every hook catches everything: a helper never throws into, delays or alters the host's calls.

export {
  instrumentFetch,
  observeFetch,
  type FetchInstrumentationOptions,
  type ObserveFetchOptions,
} from './fetch.js';
export {
  expressCollector,
  fastifyCollector,
  type ExpressMiddleware,
  type ExpressRequestLike,
  type ExpressResponseLike,
  type FastifyCollectorOptions,
  type FastifyCollectorPlugin,
  type FastifyInstanceLike,
  type FastifyReplyLike,
  type FastifyRequestLike,
  type InboundOptions,
} from './server.js';
export {
  RejectedOperation,
  isRejectedOperation,
  observeFeed,
  observeQueue,
  reject,
  type OperationOptions,
} from './operation.js';
export { idLikeSegment, routeMatcher, strippedPath, type RouteOptions } from './route.js';
