/**
 * The slices of the contracts' ABIs Core uses (events it indexes, functions it calls, errors it
 * decodes), as human-readable fragments: the operator runs without the generated typechain-types.
 * test/operator/indexer.test.ts checks every fragment against the compiled artifacts.
 */
import { Interface } from "ethers";

export const VAULT_ABI = [
  "event Deposited(address indexed user, address indexed asset, uint256 amount, uint256 balance)",
  "event WithdrawalRequested(uint256 indexed withdrawalId, address indexed user, address indexed asset, uint256 amount, uint64 finalizableAt)",
  "event WithdrawalCancelled(uint256 indexed withdrawalId, address indexed user, address indexed asset)",
  "event WithdrawalFinalized(uint256 indexed withdrawalId, address indexed user, address indexed asset, uint256 requested, uint256 paid)",
  "event DefaultCovered(address indexed user, address indexed asset, uint256 obligation, uint256 covered)",
  "event GuaranteeRemunerated(bytes32 indexed guaranteeId, address indexed user, address indexed recipient, address asset, uint256 amount)",
  "event ReserveRegistered(bytes32 indexed guaranteeId, address indexed user, address indexed recipient, address asset, uint256 amount, uint64 expiresAt)",
  "event ReserveReleased(bytes32 indexed guaranteeId, address indexed user, address asset, uint256 amount)",
  "event TimingsUpdated((uint64 cycleLength, uint64 commitDelay, uint64 challengeWindow, uint64 paymentWindow, uint64 defaultWindow, uint64 withdrawalGracePeriod) timings)",
  "function timings() view returns ((uint64 cycleLength, uint64 commitDelay, uint64 challengeWindow, uint64 paymentWindow, uint64 defaultWindow, uint64 withdrawalGracePeriod))",
  "function balanceOf(address user, address asset) view returns (uint256)",
  "function obligationOf(address user, address asset) view returns (uint256)",
  "function freeCollateralOf(address user, address asset) view returns (uint256)",
  "function withdrawalFinalizableAt(address user, address asset) view returns (uint64)",
  "function consumption(bytes32 guaranteeId) view returns (uint8)",
  "function consumptionOf(bytes32[] guaranteeIds) view returns (uint8[])",
  "error GuaranteeAlreadyConsumed(bytes32 guaranteeId, uint8 how)",
  "error ObligationExceeded(address user, address asset, uint256 obligation, uint256 amount)",
];

export const CLEARING_HOUSE_ABI = [
  "event CycleCommitted(uint256 indexed cycleId, bytes32 root, uint64 paymentDeadline, uint64 defaultDeadline, uint256 assetCount, uint256 debtorCount, uint256 nettedV2Count)",
  "event NetDebitPaid(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 amount, bool late)",
  "event DefaultCovered(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 amount, uint256 covered)",
  "event NetCreditClaimed(uint256 indexed cycleId, address indexed asset, address indexed participant, uint256 amount)",
  "event CycleFinalized(uint256 indexed cycleId)",
  // Applied as part of the commit's CycleCommitted (a cycle Core did not plan is rebuilt from them).
  "event CycleAssetCommitted(uint256 indexed cycleId, address indexed asset, uint256 total)",
  "event NetDebitRecorded(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 amount)",
  "event CycleChallengeWindow(uint256 indexed cycleId, bytes32 guaranteesRoot, uint64 challengeDeadline, uint64 answerDeadline)",
  "event DebitChallenged(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 amount)",
  "event ChallengeAnswered(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 count, uint256 signed)",
  "event DebitVoided(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 amount, uint256 fromBond)",
  "event CycleVetoed(uint256 indexed cycleId, address indexed guardian)",
  "event VetoedDebtReleased(uint256 indexed cycleId, address indexed asset, address indexed debtor, uint256 amount, bool refunded)",
  "event DoubleListingProven(bytes32 indexed guaranteeId, address indexed payer, address indexed asset, uint256 firstCycleId, uint256 laterCycleId, uint256 amount)",
  "event DoubleListingRefunded(address indexed asset, address indexed payer, uint256 paid, uint256 owed)",
  "function answerChallenge(uint256 cycleId, address asset, address debtor, (bytes claims, uint8 scheme, bytes signature, bytes32[] proof)[] guarantees)",
  "function voidUnansweredDebit(uint256 cycleId, address asset, address debtor)",
  "function releaseVetoedDebt(uint256 cycleId, address asset, address debtor)",
  "function answeredIn(bytes32 guaranteeId) view returns (uint256)",
  "function bondOf(address asset) view returns (uint256)",
  "function lastCycleId() view returns (uint256)",
  "function commitCycle(uint256 cycleId, bytes32 root, bytes32 guaranteesRoot, (address asset, uint256 totalDebit, uint256 totalCredit)[] totals, (address asset, address debtor, uint256 amount)[] debtors, bytes32[] nettedV2Ids)",
  "function coverDefault(uint256 cycleId, address asset, address debtor)",
  "function claimNetCredit(uint256 cycleId, address asset, address participant, uint256 credit, bytes32[] proof)",
  "function getCycle(uint256 cycleId) view returns ((bytes32 root, bytes32 guaranteesRoot, uint64 committedAt, uint64 challengeDeadline, uint64 answerDeadline, uint64 paymentDeadline, uint64 defaultDeadline, uint32 openDebts, uint32 openChallenges, bool finalized, bool vetoed, uint64 doubleListingDeadline))",
  "function debtOf(uint256 cycleId, address asset, address debtor) view returns ((uint248 amount, uint8 status))",
  "function isCreditClaimed(uint256 cycleId, address asset, address participant) view returns (bool)",
  "error UnexpectedCycleId(uint256 expected, uint256 cycleId)",
  "error DebtAlreadyResolved(uint256 cycleId, address asset, address debtor, uint8 status)",
  "error PaymentWindowOpen(uint256 cycleId, uint64 paymentDeadline)",
  "error NoDebt(uint256 cycleId, address asset, address debtor)",
  "error CycleIsVetoed(uint256 cycleId)",
  "error CycleNotVetoed(uint256 cycleId)",
  "error ChallengeWindowOpen(uint256 cycleId, uint64 challengeDeadline)",
  "error AnswerWindowClosed(uint256 cycleId, uint64 answerDeadline)",
  "error AnswerWindowOpen(uint256 cycleId, uint64 answerDeadline)",
  "error InsufficientSignedAmount(uint256 signed, uint256 debit)",
  "error GuaranteeAlreadyUsed(bytes32 guaranteeId, uint256 cycleId)",
  "error GuaranteeNotInCycle(bytes32 guaranteeId)",
  "error InvalidGuaranteeSignature(bytes32 guaranteeId)",
  "error GuaranteeRemunerated(bytes32 guaranteeId)",
];

export const VALIDATION_REGISTRY_ABI = [
  "event ValidationResponse(address indexed validatorAddress, uint256 indexed agentId, bytes32 indexed requestHash, uint8 response, string responseUri, bytes32 responseHash, string tag)",
];

export const vaultInterface = new Interface(VAULT_ABI);
export const clearingHouseInterface = new Interface(CLEARING_HOUSE_ABI);
export const validationRegistryInterface = new Interface(VALIDATION_REGISTRY_ABI);
/** Errors a commit can revert with come from both contracts (the Vault's bubble up). */
export const commitErrorsInterface = new Interface([
  ...CLEARING_HOUSE_ABI.filter((f) => f.startsWith("error")),
  ...VAULT_ABI.filter((f) => f.startsWith("error")),
]);

/** Vault.Consumption: how a V2 guarantee id was used up. */
export const CONSUMPTION = { none: 0, remunerated: 1, netted: 2 } as const;
