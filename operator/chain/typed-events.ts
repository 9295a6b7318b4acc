/**
 * The logs Core follows, decoded through the typechain bindings (`hardhat compile` generates them from
 * contracts/*.sol): every event of the Vault, the ClearingHouse and the ValidationRegistry is a member of
 * {@link TypedChainEvent}, keyed `Contract.Event`, its `args` typed as the contract declares them. A renamed
 * event or argument fails the type check of the handler that reads it, instead of silently reading nothing.
 */
import { getAddress, type Interface, type Log } from "ethers";
import type { ClearingHouse, ValidationRegistry, Vault } from "../../typechain-types";
import type { TypedContractEvent } from "../../typechain-types/common";
import type { DeploymentInfo } from "../deployment";
import { clearingHouseInterface, validationRegistryInterface, vaultInterface } from "./abi";
import type { ChainLogRef, ContractName, EventValue } from "./event-types";

interface Contracts {
  Vault: Vault;
  ClearingHouse: ClearingHouse;
  ValidationRegistry: ValidationRegistry;
}

/** Event names of a typechain contract (its `filters`, less the `Name(types)` signature forms). */
type EventNames<C extends { filters: object }> = Exclude<
  Extract<keyof C["filters"], string>,
  `${string}(${string}`
>;

/** `Contract.Event` for every event Core's contracts declare. */
export type EventKey = { [C in ContractName]: `${C}.${EventNames<Contracts[C]>}` }[ContractName];

type ContractOf<K extends EventKey> = K extends `${infer C extends ContractName}.${string}` ? C : never;
type NameOf<K extends EventKey> = K extends `${string}.${infer N}` ? N : never;

/** The decoded arguments of event `K`, by name (typechain's `OutputObject`). */
export type EventArgs<K extends EventKey> =
  Contracts[ContractOf<K>]["filters"][NameOf<K> &
    keyof Contracts[ContractOf<K>]["filters"]] extends TypedContractEvent<infer _I, infer _O, infer Out>
    ? Out
    : never;

/** One decoded log of event `K`. */
export interface DecodedEvent<K extends EventKey = EventKey> extends ChainLogRef {
  key: K;
  contract: ContractName;
  name: string;
  args: EventArgs<K>;
  /** The arguments in plain form (nested structs as objects): what the journal stores (chain_events.args). */
  plainArgs: Record<string, EventValue>;
}

/** Any log Core follows: narrow it on `key`. */
export type TypedChainEvent = { [K in EventKey]: DecodedEvent<K> }[EventKey];

function plain(value: unknown): EventValue {
  if (typeof value === "bigint" || typeof value === "boolean" || typeof value === "number") return value;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const result = value as unknown as { toObject?: () => Record<string, unknown> };
    try {
      const object = result.toObject?.();
      if (object && Object.keys(object).length > 0 && !Object.keys(object).every((k) => /^_?\d+$/.test(k))) {
        return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, plain(v)]));
      }
    } catch {
      // A Result with unnamed members: fall through to an array.
    }
    return value.map(plain);
  }
  return String(value);
}

/** JSON form of event arguments (bigints as decimal strings) for the journal. */
export function jsonArgs(args: Record<string, EventValue>): Record<string, unknown> {
  const convert = (value: EventValue): unknown => {
    if (typeof value === "bigint") return value.toString();
    if (Array.isArray(value)) return value.map(convert);
    if (typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v)]));
    return value;
  };
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, convert(v)]));
}

/** The one decoder: a log of Core's contracts → its {@link TypedChainEvent}. */
export class EventDecoder {
  private readonly byAddress: Map<string, { contract: ContractName; iface: Interface }>;

  constructor(deployment: Pick<DeploymentInfo, "vault" | "clearingHouse" | "validationRegistry">) {
    this.byAddress = new Map([
      [deployment.vault.toLowerCase(), { contract: "Vault", iface: vaultInterface }],
      [deployment.clearingHouse.toLowerCase(), { contract: "ClearingHouse", iface: clearingHouseInterface }],
      [
        deployment.validationRegistry.toLowerCase(),
        { contract: "ValidationRegistry", iface: validationRegistryInterface },
      ],
    ]);
  }

  get addresses(): string[] {
    return [...this.byAddress.keys()].map((a) => getAddress(a));
  }

  /**
   * The event of `log`, or null for a log of another address or one its contract's interface does not
   * parse (skipped without a trace, as it always was).
   */
  decode(log: Log, blockTimestamp: number): TypedChainEvent | null {
    const source = this.byAddress.get(log.address.toLowerCase());
    if (!source) return null;
    const parsed = source.iface.parseLog({ topics: [...log.topics], data: log.data });
    if (!parsed) return null;
    const plainArgs: Record<string, EventValue> = {};
    parsed.fragment.inputs.forEach((input, i) => {
      plainArgs[input.name] = plain(parsed.args[i]);
    });
    // The interface is typechain's for this contract, so the parsed name is one of its events and its
    // Result carries the arguments by name exactly as EventArgs types them.
    return {
      key: `${source.contract}.${parsed.name}` as EventKey,
      contract: source.contract,
      name: parsed.name,
      args: parsed.args as unknown as EventArgs<EventKey>,
      plainArgs,
      txHash: log.transactionHash.toLowerCase(),
      logIndex: log.index,
      blockNumber: log.blockNumber,
      blockHash: log.blockHash.toLowerCase(),
      blockTimestamp,
    } as TypedChainEvent;
  }
}

/**
 * A journaled event's arguments read back (chain_events.args: bigints as decimal strings), typed as event
 * `K` declares them. For handlers that read earlier logs of the same transaction from the journal.
 */
export type JournaledArgs<K extends EventKey> = {
  [P in keyof EventArgs<K>]: EventArgs<K>[P] extends bigint ? string : EventArgs<K>[P];
};

/** The arguments of journal row `row` if it is an event `key`, else null. */
export function journaledArgsOf<K extends EventKey>(
  row: { contract: string; name: string; args: Record<string, unknown> },
  key: K,
): JournaledArgs<K> | null {
  return `${row.contract}.${row.name}` === key ? (row.args as JournaledArgs<K>) : null;
}
