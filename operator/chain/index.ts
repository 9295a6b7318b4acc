export {
  ChainError,
  type ChainGateway,
  type JsonRpcSender,
  RpcChainGateway,
  type RpcChainGatewayOptions,
  VAULT_KEY_ABI,
  type VaultOperatorKey,
  withTimeout,
} from "./gateway";
