// What the ARI dispatcher needs of a cluster (src/cluster/ implements it; server.ts hands it in):
// a request for a resource this server does not hold may be served by the member that does, and
// a listing may gather every member's. ari/ never imports the cluster.
import type { AriRequest, AriResponse } from './request-types.ts';
import type { RouteTarget } from './router.ts';

export interface RequestForwarder {
  /**
   * The answer of another member for a routed request, or undefined to serve it here (the
   * resource is local, nobody else owns it, or the operation is not one that is forwarded).
   * Never called for a request that was itself forwarded here.
   */
  forward(request: AriRequest, target: RouteTarget, pathParams: Readonly<Record<string, string>>): Promise<AriResponse> | undefined;
}
