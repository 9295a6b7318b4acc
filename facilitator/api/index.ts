export { createFacilitatorApp, JSON_BODY_LIMIT_BYTES } from "./app";
export { type FacilitatorContext, DeploymentUnavailableError } from "./context";
export { EVM_SIGNER_FAMILY, INVALID_REQUEST } from "./responses";
export { DEPLOYMENT_UNAVAILABLE } from "./routes";
