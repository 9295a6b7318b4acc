/**
 * Small durable settings of the operator (key → string). Kept apart from the data areas: the leader lease
 * and its fencing token (several replicas on one database) belong next to it.
 */

export interface OperatorStateRepository {
  getOperatorState(key: string): Promise<string | null>;
  setOperatorState(key: string, value: string | null): Promise<void>;
}
