export {
  ChainError,
  type ChainGateway,
  type JsonRpcSender,
  RpcChainGateway,
  type RpcChainGatewayOptions,
  type VaultOperatorKey,
  withTimeout,
} from "./gateway";
