// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {SSTORE2} from "solady/src/utils/SSTORE2.sol";
import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {TimelockedRoles} from "./access/TimelockedRoles.sol";
import {IClearingHouse} from "./interfaces/IClearingHouse.sol";
import {IClearingVault} from "./interfaces/IClearingVault.sol";
import {IGuaranteeVerifier} from "./interfaces/IGuaranteeVerifier.sol";
import {IVault} from "./interfaces/IVault.sol";
import {GuaranteeSignature} from "./lib/GuaranteeSignature.sol";
import {RemunerationLogic} from "./vault/RemunerationLogic.sol";
import {ReserveLogic} from "./vault/ReserveLogic.sol";
import {VaultCertificates} from "./vault/VaultCertificates.sol";
import {VaultLedger} from "./vault/VaultLedger.sol";

/// @title Vault
/// @notice Holds payers' collateral (ETH as address(0) and allow-listed ERC-20 tokens), the obligations of
/// committed clearing cycles, delayed withdrawals, and the on-chain record of consumed V2 guarantees.
/// @dev Invariant: for every asset, the Vault's holdings equal the sum of user balances (funds owed to
/// clearing leave the Vault at once in {coverDefault}); the sum is not stored (it would cost two storage
/// accesses on every deposit, withdrawal and remuneration and nothing on chain reads it): indexers add up
/// the balance events. Pausing blocks deposits and
/// withdrawals only; obligations, default coverage and remuneration keep working so that creditors are
/// never held hostage by a pause.
contract Vault is IVault, TimelockedRoles, Pausable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice Role that sets the token allow-list, trusted registries and timings (grants timelocked).
    bytes32 public constant CONFIG_ROLE = keccak256("CONFIG_ROLE");
    /// @notice Role that rotates the operator's BLS public key (grants timelocked).
    bytes32 public constant KEY_MANAGER_ROLE = keccak256("KEY_MANAGER_ROLE");
    /// @notice Role that pauses and unpauses deposits and withdrawals.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice The EIP-712 domain name payers sign guarantees under (Core's `eip712_name` must equal it).
    string internal constant EIP712_NAME = "Surety";
    /// @notice The EIP-712 domain version payers sign guarantees under (Core's `eip712_version`).
    string internal constant EIP712_VERSION = "1";
    /// @notice The asset id of ETH.
    address internal constant ETH = address(0);
    /// @notice Upper bound on the withdrawal grace period, so collateral can never be frozen indefinitely.
    uint64 public constant MAX_WITHDRAWAL_GRACE_PERIOD = 30 days;
    /// @notice Most of {timelockDelay} a key gap may add to an answer deadline ({answerDeadlineAfterKeyGap}),
    /// so an admin delay raised in advance can never hold a disputing payer's collateral longer (audit A2-L2).
    uint64 public constant MAX_KEY_GAP_DELAY = 30 days;

    /// @dev The EIP-712 domain separator of guarantees and the chain it was computed for.
    bytes32 private immutable _DOMAIN_SEPARATOR;
    uint256 private immutable _DOMAIN_CHAIN_ID;

    /// @notice Checks certificates and payers' signatures for {remunerate} and {registerReserve} (shared
    /// with the ClearingHouse; set at construction).
    IGuaranteeVerifier public immutable guaranteeVerifier;

    /// @notice The ClearingHouse allowed to call the clearing hooks (set once).
    address public clearingHouse;
    /// @notice Id the next withdrawal request gets (ids start at 1).
    uint256 public nextWithdrawalId = 1;

    Timings private _timings;
    /// @dev The operator's BLS key, stored as the code of a data contract (SSTORE2: one cold slot and one
    /// code copy per certificate check instead of six cold slots); zero while no key is set.
    address private _operatorKeyData;
    /// @dev Where the dispute clock of the operator key stands ({operatorKeySince}); shares the key's slot.
    uint48 private _operatorKeySince;

    /// @notice Whether the deployment wiring is over ({finishSetup}): from then on role grants, operator key
    /// changes, new trusted registries and timing changes are timelocked.
    bool public setupFinished;

    /// @notice Whether `token` may be deposited.
    mapping(address token => bool) public isTokenAllowed;

    /// @dev Collateral, reserves, consumed ids and trusted registries: what the logic libraries share.
    VaultLedger.Books private _books;
    mapping(address user => mapping(address asset => WithdrawalRequest)) private _withdrawals;
    /// @dev Each payer's guarantee signing keys, oldest first ({setGuaranteeSigner}); never rewritten.
    mapping(address payer => GuaranteeSigner[]) private _guaranteeSigners;

    /// @dev Tags of the timelocked operation ids (TimelockedRoles).
    bytes32 private constant _KEY_TAG = keccak256("VAULT_OPERATOR_KEY");
    bytes32 private constant _REGISTRY_TAG = keccak256("VAULT_TRUSTED_REGISTRY");
    bytes32 private constant _TIMINGS_TAG = keccak256("VAULT_TIMINGS");

    modifier onlyClearingHouse() {
        if (msg.sender != clearingHouse) revert NotClearingHouse(msg.sender);
        _;
    }

    /// @param admin Receives the admin, config, key-manager and pauser roles.
    /// @param adminTransferDelay Seconds between `beginDefaultAdminTransfer` and the earliest
    /// `acceptDefaultAdminTransfer` (the default admin changes in two steps, never at once).
    /// @param timings_ Initial timings (checked as in {setTimings}).
    /// @param verifier The {IGuaranteeVerifier} (a contract; shared with the ClearingHouse).
    constructor(
        address admin,
        uint48 adminTransferDelay,
        Timings memory timings_,
        IGuaranteeVerifier verifier
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(verifier).code.length == 0) revert InvalidGuaranteeVerifier(address(verifier));
        guaranteeVerifier = verifier;
        _DOMAIN_CHAIN_ID = block.chainid;
        _DOMAIN_SEPARATOR = GuaranteeSignature.domainSeparator(
            EIP712_NAME,
            EIP712_VERSION,
            block.chainid,
            address(this)
        );
        _grantRole(CONFIG_ROLE, admin);
        _grantRole(KEY_MANAGER_ROLE, admin);
        _grantRole(PAUSER_ROLE, admin);
        _checkTimings(timings_);
        _timings = timings_;
        emit TimingsUpdated(timings_);
    }

    // ------------------------------------------------------------------ deposits

    /// @notice Deposits the ETH sent with the call as the caller's collateral.
    function deposit() external payable whenNotPaused nonReentrant {
        if (msg.value == 0) revert ZeroAmount();
        _credit(msg.sender, ETH, msg.value);
    }

    /// @notice Deposits `amount` of the allow-listed `token` (pulled with transferFrom; approve first).
    /// @dev Credits what actually arrived, so a fee-on-transfer token cannot inflate balances.
    function depositToken(address token, uint256 amount) external whenNotPaused nonReentrant {
        if (amount == 0) revert ZeroAmount();
        if (!isTokenAllowed[token]) revert TokenNotAllowed(token);
        uint256 before = IERC20(token).balanceOf(address(this));
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = IERC20(token).balanceOf(address(this)) - before;
        if (received == 0) revert NothingReceived(token);
        _credit(msg.sender, token, received);
    }

    // --------------------------------------------------------------- withdrawals

    /// @notice Opens a withdrawal of `amount` of `asset`, finalizable after the withdrawal grace period.
    /// @dev One open request per user and asset; `amount` may not exceed the current balance.
    function requestWithdrawal(address asset, uint256 amount) external whenNotPaused {
        if (amount == 0) revert ZeroAmount();
        WithdrawalRequest storage request = _withdrawals[msg.sender][asset];
        if (request.id != 0) revert WithdrawalAlreadyPending(msg.sender, asset, request.id);
        uint256 balance = _books.accounts[msg.sender][asset].balance;
        if (amount > balance) revert WithdrawalExceedsBalance(msg.sender, asset, balance, amount);
        // A uint64 id cannot overflow: it grows by one per transaction.
        uint64 id = uint64(nextWithdrawalId++);
        uint64 finalizableAt = uint64(block.timestamp) + _timings.withdrawalGracePeriod;
        request.id = id;
        request.requestedAt = uint64(block.timestamp);
        request.amount = amount;
        request.finalizableAt = finalizableAt;
        emit WithdrawalRequested(id, msg.sender, asset, amount, finalizableAt);
    }

    /// @notice Cancels the caller's open withdrawal of `asset` (allowed while paused).
    function cancelWithdrawal(address asset) external {
        uint64 id = _withdrawals[msg.sender][asset].id;
        if (id == 0) revert NoPendingWithdrawal(msg.sender, asset);
        delete _withdrawals[msg.sender][asset];
        emit WithdrawalCancelled(id, msg.sender, asset);
    }

    /// @notice Closes the caller's open withdrawal of `asset` once it is ready ({withdrawalFinalizableAt}),
    /// paying min(requested, balance - obligations). The payment may be smaller than requested (even zero)
    /// when collateral was used for clearing or remuneration in the meantime.
    function finalizeWithdrawal(address asset) external whenNotPaused nonReentrant {
        WithdrawalRequest memory request = _withdrawals[msg.sender][asset];
        if (request.id == 0) revert NoPendingWithdrawal(msg.sender, asset);
        uint64 readyAt = _readyAt(request);
        if (block.timestamp < readyAt) revert WithdrawalNotReady(request.id, readyAt);
        VaultLedger.Account storage account = _books.accounts[msg.sender][asset];
        uint256 free = VaultLedger.free(account);
        uint256 paid = request.amount < free ? request.amount : free;
        delete _withdrawals[msg.sender][asset];
        // paid <= free <= balance < 2^128
        account.balance -= uint128(paid);
        emit WithdrawalFinalized(request.id, msg.sender, asset, request.amount, paid);
        VaultLedger.send(asset, msg.sender, paid);
    }

    // ------------------------------------------------------- guarantee signing keys

    /// @notice Registers `key`, an EOA, to sign the caller's guarantees (a contract wallet's key: what a
    /// signature that does not recover to the payer itself is checked against, here, in the ClearingHouse's
    /// dispute answers and at Core; never the wallet's ERC-1271 answer, which the wallet could revoke).
    /// The first key signs guarantees of any timestamp, at once. A change signs only guarantees timestamped
    /// `block.timestamp + withdrawalGracePeriod` or later; earlier ones keep the key in effect at their
    /// timestamp, for good, so no signature Core accepted can be revoked. One change at a time.
    /// @dev Why that delay: Core accepts a guarantee only if its timestamp is before its indexed head's time
    /// plus the grace period, so a change Core has not indexed yet can never cover a timestamp it accepted
    /// (docs/protocol.md "Payer signatures"). Reverts {InvalidGuaranteeSigner} for the zero address and
    /// {GuaranteeSignerChangePending} while the previous change is not in effect.
    function setGuaranteeSigner(address key) external {
        if (key == address(0)) revert InvalidGuaranteeSigner(key);
        GuaranteeSigner[] storage keys = _guaranteeSigners[msg.sender];
        uint64 from;
        uint256 n = keys.length;
        if (n != 0) {
            uint64 last = keys[n - 1].effectiveFrom;
            if (last > block.timestamp) revert GuaranteeSignerChangePending(msg.sender, last);
            from = uint64(block.timestamp) + _timings.withdrawalGracePeriod;
        }
        keys.push(GuaranteeSigner(key, from));
        emit GuaranteeSignerSet(msg.sender, key, from);
    }

    // -------------------------------------------------------------- remuneration

    /// @notice V2 validation path: pays a V2 guarantee whose validation passed from the payer's free
    /// collateral to the recipient. Anyone may submit it; the money always goes to the recipient.
    /// @param claims The raw certificate claims (docs/protocol.md, "Certificates"), exactly as Core signed them.
    /// @param signature Core's BLS signature over `claims` (G1, EIP-2537 form, POP tag).
    /// @param payerScheme How the payer signed the guarantee (0 = EIP-712, 1 = EIP-191).
    /// @param payerSignature The payer's own signature over the guarantee (the one Core was given): 65 bytes
    /// for an EOA, anything its ERC-1271 `isValidSignature` accepts for a contract wallet.
    /// @dev Reverts without payment unless: the claims are V2 for this chain and Vault, the guarantee id
    /// matches its fields, the signature verifies against the operator key, the payer signed the very
    /// guarantee under this Vault's EIP-712 domain (so Core's key alone cannot pay anything), the guarantee
    /// was neither remunerated nor netted, the policy's registry is trusted, and the policy's validator
    /// answered the validation request hash (which commits to the whole policy, agent id included) with a
    /// score >= minScore, the policy's tag and a last update no later than the deadline, or that verdict was
    /// pinned ({pinVerdicts}; then the registry is not read). Not pausable.
    function remunerate(
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external nonReentrant {
        RemunerationLogic.remunerate(_books, _authority(), claims, signature, payerScheme, payerSignature);
    }

    /// @notice Pins the passing V2 verdict of each guarantee in `claims` once its policy deadline has passed
    /// (audit H-2): a validator's later response (even the same score) or the registry's removal from the
    /// trusted set can then no longer turn it into "not validated" for {remunerate} or the ClearingHouse's
    /// dispute answers. Anyone may call (Core pins every V2 guarantee it nets; a seller may pin its own);
    /// docs/clearing.md "Pinned verdicts".
    /// @param claims The raw V2 certificate claims, one per guarantee (no signature is needed: a pin only
    /// records what the trusted registry says now, for the validation request the claims' policy and id
    /// make, which {isVerdictPinned} answers by).
    /// @return pinned How many verdicts were pinned by this call.
    /// @dev Reverts for claims that are not V2 for this chain and Vault (`NotV2Certificate`, codec, domain and
    /// id errors) or whose deadline has not passed (`VerdictNotFinal`: up to it, the validator's latest
    /// answer is the verdict). Skips without reverting a verdict already pinned or not passing now (untrusted
    /// registry, no response, score, tag, last update after the deadline: the rule of {remunerate}); each pin
    /// emits {VerdictPinned}. Not pausable.
    function pinVerdicts(bytes[] calldata claims) external returns (uint256 pinned) {
        return RemunerationLogic.pinVerdicts(_books, claims);
    }

    /// @notice Seller's reserve (issue 17, finding 5): the holder of a certificate registers it so that its
    /// amount of the payer's collateral can no longer be withdrawn (nor taken by another remuneration).
    /// Anyone may submit. Checks as {remunerate} up to the payer's signature (a V1 certificate: see below),
    /// then: not consumed, no reserve yet, non-zero amount, not after the registration deadline, free
    /// collateral covers the amount.
    /// V2 (`ReserveRegistered`): the reserve holds until the guarantee is remunerated or netted, or expires at
    /// `validationDeadline + withdrawalGracePeriod`; registration is open until the validation deadline. If
    /// Core stops, the seller still remunerates on its own ({remunerate}: the verdict is on chain) out of the
    /// reserved collateral.
    /// V1 (`V1ReserveRegistered`; docs/contracts.md "Seller's V1 reserve"): with t the claims' timestamp,
    /// registration is open until `registerBy = t + cycleLength + commitDelay + confirmationLag` (a live
    /// Core's commit of the guarantee's cycle lands by then); the reserve ends when the guarantee is shown
    /// cleared by Core (a commit marked it netted: {releaseReserve}; its leaf proven in a settled cycle:
    /// {releaseListedReserve}) or, if Core has not cleared it by `collectableAt = registerBy + 2 *
    /// challengeWindow`, when it is collected for the recipient ({collectReserve}). The certificate and the
    /// payer's signature are checked by {guaranteeVerifier} (`CertificateDomainMismatch`, `GuaranteeIdMismatch`,
    /// `OperatorKeyNotSet`, `InvalidCertificateSignature`, `InvalidPayerSignature`, codec errors).
    /// @param claims The certificate claims (V1 or V2).
    /// @param signature Core's BLS signature over them.
    /// @param payerScheme How the payer signed.
    /// @param payerSignature The payer's signature over the guarantee.
    function registerReserve(
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external {
        ReserveLogic.registerReserve(
            _books,
            _timings,
            _authority(),
            claims,
            signature,
            payerScheme,
            payerSignature
        );
    }

    /// @notice Releases the V1 reserve of `guaranteeId` by proving that Core cleared its guarantee to its
    /// recipient: the leaf (the reserve's guarantee id, payer, recipient, asset, amount, and a signature hash)
    /// sits in the recipient's incoming tree (its summary under the `debitsRoot`) of a cycle that is committed,
    /// not vetoed and past its challenge deadline, so the recipient's claim of that cycle pays it (issue 25,
    /// item 5: a listing credited to another creditor releases nothing). Marks the guarantee netted
    /// (`GuaranteeNetted`, if not consumed yet) so it can never be collected or reserved again. Anyone may call
    /// (Core's keeper, the payer); the proof: the `incoming` entry of Core's
    /// `GET /core/cycles/{id}/debits/{recipient}`.
    /// @dev Checked by {ReserveLogic} (`ReserveNotFound`, `CycleNotSettled`, `GuaranteeNotListed`).
    /// @param guaranteeId The reserved V1 guarantee.
    function releaseListedReserve(
        bytes32 guaranteeId,
        uint256 cycleId,
        bytes32 signatureHash,
        IClearingHouse.CreditProof calldata proof
    ) external {
        ReserveLogic.releaseListedReserve(
            _books,
            IClearingHouse(clearingHouse),
            guaranteeId,
            cycleId,
            signatureHash,
            proof
        );
    }

    /// @notice Marks the V2 guarantee of `claims` netted by cycle `cycleId` by proving that the cycle credits it
    /// to its recipient (audit2 A2-M2): its leaf (the claims' guarantee id, payer, recipient, asset and amount,
    /// and `signatureHash`, the keccak256 of the payer's signature bytes) sits in the recipient's incoming tree
    /// (`proof`, under the `debitsRoot`) of a committed cycle not vetoed, so that cycle's claim pays it and no
    /// {remunerate} may pay it again. For a V2 id the commit listed but left out of its `nettedV2Ids`:
    /// anyone may call (the payer, from the commit on; a payer disputing in time is covered by the answer,
    /// which marks it too). The mark carries the cycle id: a veto undoes it (`GuaranteeNetted`), and so does
    /// a `Removed` answer of that listing as not validated (`GuaranteeNettingUndone`, audit3 A3-L2).
    /// @dev Reverts `NotV2Certificate` and the codec's, domain and id errors for claims that are not V2 of this
    /// Vault (no signature is checked: only a listed leaf can be marked), `GuaranteeNotListed` (not committed,
    /// vetoed, not credited to its recipient, or that listing removed by an answer) and
    /// `GuaranteeAlreadyConsumed`. Proof: the `incoming`
    /// entry of Core's `GET /core/cycles/{id}/debits/{recipient}`, as for {releaseListedReserve}.
    function markListed(
        uint256 cycleId,
        bytes calldata claims,
        bytes32 signatureHash,
        IClearingHouse.CreditProof calldata proof
    ) external {
        ReserveLogic.markListed(_books, IClearingHouse(clearingHouse), cycleId, claims, signatureHash, proof);
    }

    /// @notice Pays the recipient of the V1 reserve of `guaranteeId` out of the reserved collateral once Core
    /// has not cleared the guarantee by the reserve's `collectableAt` (`ReserveNotYetCollectable` before;
    /// `GuaranteeAlreadyConsumed` once marked netted). The guarantee is then consumed as `Remunerated`: a
    /// commit that lists it later skips it (`GuaranteeNettingSkipped`), and it cannot answer a challenge of
    /// its payer's debit. Anyone may call; the money goes to the recipient. Not pausable.
    /// @dev Pays min(amount, balance): only an over-committed payer (Core's fault) can have less.
    /// @param guaranteeId The reserved V1 guarantee.
    function collectReserve(bytes32 guaranteeId) external nonReentrant {
        ReserveLogic.collectReserve(_books, guaranteeId);
    }

    /// @notice Frees the collateral a reserve holds once its guarantee was consumed (remunerated or netted: a
    /// V2 netting mark counts once its cycle is past its challenge deadline, not vetoed and with no dispute
    /// open, so no veto or `Removed` answer can undo it) or, for a V2 reserve, it expired; callable by anyone
    /// (Core's keeper, the payer). A V1 reserve never
    /// expires: it is released once its guarantee is consumed (a commit marked it netted), proven cleared
    /// ({releaseListedReserve}) or collected ({collectReserve}).
    function releaseReserve(bytes32 guaranteeId) external {
        ReserveLogic.releaseReserve(_books, guaranteeId);
    }

    // ------------------------------------------------------------ clearing hooks

    /// @inheritdoc IClearingVault
    function recordObligations(Obligation[] calldata obligations) external onlyClearingHouse {
        for (uint256 i = 0; i < obligations.length; ++i) {
            Obligation calldata o = obligations[i];
            VaultLedger.Account storage account = _books.accounts[o.debtor][o.asset];
            uint128 locked = account.locked + SafeCast.toUint128(o.amount);
            account.locked = locked;
            emit ObligationRecorded(o.debtor, o.asset, o.amount, locked - _books.reserved[o.debtor][o.asset]);
        }
    }

    /// @inheritdoc IClearingVault
    function releaseObligation(address user, address asset, uint256 amount) external onlyClearingHouse {
        VaultLedger.Account storage account = _books.accounts[user][asset];
        uint256 obligation = account.locked - _books.reserved[user][asset];
        if (amount > obligation) revert ObligationExceeded(user, asset, obligation, amount);
        // amount <= obligation <= locked < 2^128
        account.locked -= uint128(amount);
        emit ObligationReleased(user, asset, amount, obligation - amount);
    }

    /// @inheritdoc IClearingVault
    function coverDefault(
        address user,
        address asset,
        uint256 amount
    ) external onlyClearingHouse nonReentrant returns (uint256 covered) {
        VaultLedger.Account storage account = _books.accounts[user][asset];
        uint256 obligation = account.locked - _books.reserved[user][asset];
        if (amount > obligation) revert ObligationExceeded(user, asset, obligation, amount);
        uint256 balance = account.balance;
        covered = amount < balance ? amount : balance;
        // amount <= obligation <= locked and covered <= balance, all < 2^128
        account.locked -= uint128(amount);
        account.balance = uint128(balance - covered);
        emit DefaultCovered(user, asset, amount, covered);
        VaultLedger.send(asset, clearingHouse, covered);
    }

    /// @inheritdoc IClearingVault
    /// @dev An id already consumed is skipped with `GuaranteeNettingSkipped` instead of reverting the whole
    /// commit: one front-running `remunerate` must not cost the operator a reverted commit (the
    /// over-charge it leaves is answerable on chain, docs/clearing.md "Skipped ids").
    function markNetted(
        uint256 cycleId,
        bytes32[] calldata guaranteeIds
    ) external onlyClearingHouse returns (uint256 netted) {
        for (uint256 i = 0; i < guaranteeIds.length; ++i) {
            bytes32 id = guaranteeIds[i];
            // A mark of a vetoed commit reads as None: the re-commit marks the id again.
            Consumption how = VaultLedger.consumption(_books, id);
            if (how != Consumption.None) {
                emit GuaranteeNettingSkipped(id, how);
                continue;
            }
            _books.marks[id] = VaultLedger.Mark(Consumption.Netted, SafeCast.toUint64(cycleId));
            ++netted;
            emit GuaranteeNetted(id);
        }
    }

    /// @inheritdoc IClearingVault
    function markRemoved(uint256 cycleId, bytes32 guaranteeId) external onlyClearingHouse {
        _books.removedFrom[guaranteeId][cycleId] = true;
        VaultLedger.Mark memory m = _books.marks[guaranteeId];
        if (m.how == Consumption.Netted && m.cycleId == cycleId) {
            delete _books.marks[guaranteeId];
            emit GuaranteeNettingUndone(guaranteeId, cycleId);
        }
    }

    /// @inheritdoc IClearingVault
    function markPaid(bytes32 guaranteeId) external onlyClearingHouse {
        _books.marks[guaranteeId] = VaultLedger.Mark(Consumption.Remunerated, 0);
    }

    // --------------------------------------------------------------------- admin

    /// @notice Sets the ClearingHouse (once; it owns the obligations it records).
    function setClearingHouse(address clearingHouse_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (clearingHouse != address(0)) revert ClearingHouseAlreadySet(clearingHouse);
        if (clearingHouse_.code.length == 0) revert InvalidClearingHouse(clearingHouse_);
        clearingHouse = clearingHouse_;
        _books.clearingHouse = clearingHouse_;
        emit ClearingHouseSet(clearingHouse_);
    }

    /// @notice Ends the setup phase, for good: from now on granting CONFIG_ROLE or KEY_MANAGER_ROLE, changing
    /// the operator key, trusting a new registry and changing the timings take {timelockDelay} (deployment
    /// calls this last).
    function finishSetup() external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (setupFinished) revert SetupAlreadyFinished();
        setupFinished = true;
        emit SetupFinished();
    }

    /// @notice Sets the operator's BLS public key (G2, EIP-2537 encoding). During setup at once; afterwards the
    /// first call schedules `key` ({OperatorKeyScheduled}) and a second call from {timelockDelay} later makes
    /// it the key. Certificates signed with the previous key verify until then, and stop verifying after.
    /// @dev Rejects points off the curve, outside the prime-order subgroup (the G2 MSM precompile checks
    /// both) and the identity. Reverts {OperationNotReady} for a second call before the delay; the default
    /// admin cancels a schedule with `cancelOperation`.
    function setOperatorKey(BLS.G2Point calldata key) external onlyRole(KEY_MANAGER_ROLE) {
        _checkOperatorKey(key);
        if (!_inSetup()) {
            bytes32 operation = keccak256(abi.encode(_KEY_TAG, key));
            if (operationReadyAt(operation) == 0) {
                emit OperatorKeyScheduled(
                    keccak256(abi.encode(key)),
                    key,
                    operation,
                    _scheduleOperation(operation)
                );
                return;
            }
            _executeOperation(operation);
        }
        uint48 since = uint48(block.timestamp);
        // A key replacing a revoked one counts from the earliest time a replacement could take effect: a late
        // execution shortens Core's answer window, it never lengthens the payers' wait (docs/clearing.md).
        uint48 earliest = _operatorKeySince;
        if (_operatorKeyData == address(0) && earliest != 0 && earliest < since) since = earliest;
        _operatorKeyData = SSTORE2.write(abi.encode(key));
        _operatorKeySince = since;
        emit OperatorKeyRotated(keccak256(abi.encode(key)), key);
    }

    /// @notice Removes the operator key at once (a leaked key): no certificate verifies until a scheduled
    /// key is executed. Payers' signatures still protect collateral meanwhile; this stops forged certificates.
    /// Unanswered disputes wait for the gap: see {answerDeadlineAfterKeyGap} (revoking no key changes nothing).
    function revokeOperatorKey() external onlyRole(KEY_MANAGER_ROLE) {
        bytes32 keyHash = keccak256(abi.encode(_operatorKeyNow()));
        if (_operatorKeyData != address(0)) _operatorKeySince = uint48(block.timestamp) + timelockDelay();
        delete _operatorKeyData;
        emit OperatorKeyRevoked(keyHash);
    }

    /// @notice Adds `token` to, or removes it from, the deposit allow-list. Removal stops new deposits only;
    /// existing balances stay withdrawable and usable for clearing.
    function setTokenAllowed(address token, bool allowed) external onlyRole(CONFIG_ROLE) {
        if (token == address(0) || token.code.length == 0) revert InvalidToken(token);
        isTokenAllowed[token] = allowed;
        emit TokenAllowListUpdated(token, allowed);
    }

    /// @notice Removes `registry` from the trusted validation registries (at once), or adds it: during setup at
    /// once, afterwards a first call schedules it ({TrustedRegistryScheduled}) and a second call from
    /// {timelockDelay} later adds it (a new trusted registry decides which V2 guarantees pay).
    function setTrustedRegistry(address registry, bool trusted) external onlyRole(CONFIG_ROLE) {
        if (registry.code.length == 0) revert InvalidRegistry(registry);
        if (trusted && !_inSetup()) {
            bytes32 operation = keccak256(abi.encode(_REGISTRY_TAG, registry));
            if (operationReadyAt(operation) == 0) {
                emit TrustedRegistryScheduled(registry, operation, _scheduleOperation(operation));
                return;
            }
            _executeOperation(operation);
        }
        _books.isTrustedRegistry[registry] = trusted;
        emit TrustedRegistryUpdated(registry, trusted);
    }

    /// @notice Sets all timings at once, enforcing `challengeWindow > 0` and `withdrawalGracePeriod >
    /// cycleLength + commitDelay + confirmationLag + 2 * challengeWindow + paymentWindow + defaultWindow`
    /// (docs/protocol.md, grace-period invariant; the ClearingHouse's answer window is as long as the challenge
    /// window; Core's commits trail the chain by `confirmationLag`). During setup at once;
    /// afterwards every change (shorter or longer) is timelocked: a first call schedules `timings_`
    /// ({TimingsScheduled}) and a second call from {timelockDelay} later sets them.
    /// @dev A longer grace period also applies to open withdrawal requests (see {withdrawalFinalizableAt});
    /// a shorter one does not. Reverts {OperationNotReady} for a second call before the delay; the default
    /// admin cancels a schedule with `cancelOperation` (docs/contracts.md, threat model: CONFIG_ROLE).
    function setTimings(Timings calldata timings_) external onlyRole(CONFIG_ROLE) {
        _checkTimings(timings_);
        if (!_inSetup()) {
            bytes32 operation = keccak256(abi.encode(_TIMINGS_TAG, timings_));
            if (operationReadyAt(operation) == 0) {
                emit TimingsScheduled(timings_, operation, _scheduleOperation(operation));
                return;
            }
            _executeOperation(operation);
        }
        _timings = timings_;
        emit TimingsUpdated(timings_);
    }

    /// @notice Pauses deposits, withdrawal requests and withdrawal finalisation.
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @notice Lifts a pause.
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    // --------------------------------------------------------------------- views

    /// @inheritdoc IClearingVault
    function balanceOf(address user, address asset) external view returns (uint256) {
        return _books.accounts[user][asset].balance;
    }

    /// @notice `user`'s unpaid committed net debits in `asset`.
    function obligationOf(address user, address asset) external view returns (uint256) {
        return _books.accounts[user][asset].locked - _books.reserved[user][asset];
    }

    /// @notice The reserve of `guaranteeId` (all zero when none).
    function reserveOf(bytes32 guaranteeId) external view returns (Reserve memory) {
        return _books.reserves[guaranteeId];
    }

    /// @notice `user`'s balance not held by obligations or reserves: what a withdrawal or remuneration may take.
    function freeCollateralOf(address user, address asset) external view returns (uint256) {
        return VaultLedger.free(_books.accounts[user][asset]);
    }

    /// @notice How each of `guaranteeIds` was consumed (Core checks a plan's V2 ids before committing it).
    function consumptionOf(bytes32[] calldata guaranteeIds) external view returns (Consumption[] memory how) {
        how = new Consumption[](guaranteeIds.length);
        for (uint256 i = 0; i < guaranteeIds.length; ++i)
            how[i] = VaultLedger.consumption(_books, guaranteeIds[i]);
    }

    /// @notice `user`'s open withdrawal in `asset` (id 0 when none).
    function pendingWithdrawal(address user, address asset) external view returns (WithdrawalRequest memory) {
        return _withdrawals[user][asset];
    }

    /// @notice When `user`'s open withdrawal in `asset` can be finalized (0 when none): the later of the time
    /// it was given and its request time plus the current grace period. A grace period lengthened by
    /// {setTimings} (because the clearing path got longer) therefore also delays requests already open, so
    /// The grace-period invariant (docs/protocol.md) holds for them under the new timings; a shortened one never speeds them up.
    function withdrawalFinalizableAt(address user, address asset) external view returns (uint64) {
        WithdrawalRequest memory request = _withdrawals[user][asset];
        return request.id == 0 ? 0 : _readyAt(request);
    }

    /// @notice The EIP-712 domain separator of guarantees (`EIP712Domain(string name,string version,uint256
    /// chainId,address verifyingContract)` with name "Surety", version "1", this chain, this Vault): what
    /// payers sign under and what {remunerate} and the ClearingHouse's challenge answers check their
    /// signature against.
    function guaranteeDomainSeparator() external view returns (bytes32) {
        return _domainSeparator();
    }

    /// @notice `payer`'s latest guarantee signing key and the claims timestamp it signs from (all zero: none);
    /// a change is pending while `effectiveFrom` is later than the current block's time.
    function guaranteeSigner(address payer) external view returns (GuaranteeSigner memory latest) {
        GuaranteeSigner[] storage keys = _guaranteeSigners[payer];
        if (keys.length != 0) latest = keys[keys.length - 1];
    }

    /// @inheritdoc IClearingVault
    /// @dev Walks back from the latest key: a dispute answer's guarantee is at most one change old (the
    /// clearing path is shorter than the grace period that separates two changes).
    function guaranteeSignerAt(address payer, uint64 timestamp) external view returns (address) {
        GuaranteeSigner[] storage keys = _guaranteeSigners[payer];
        for (uint256 i = keys.length; i != 0; --i) {
            GuaranteeSigner memory k = keys[i - 1];
            if (k.effectiveFrom <= timestamp) return k.key;
        }
        return address(0);
    }

    /// @notice The operator's BLS public key (EIP-2537 encoding; all zero while none is set).
    function operatorKey() external view returns (BLS.G2Point memory) {
        return _operatorKeyNow();
    }

    /// @notice Whether the operator's BLS key has been set.
    function operatorKeySet() public view returns (bool) {
        return _operatorKeyData != address(0);
    }

    /// @notice Where the operator key's dispute clock stands: while a key is set, when it took effect (for a key
    /// that replaced a revoked one, the earliest time a replacement could have: the revocation plus
    /// {timelockDelay}); while none is set after a revocation, that earliest time; 0 before any key.
    function operatorKeySince() external view returns (uint64) {
        return _operatorKeySince;
    }

    /// @inheritdoc IClearingVault
    function answerDeadlineAfterKeyGap(uint256 answerDeadline) external view returns (uint256) {
        uint256 window = _timings.challengeWindow;
        uint256 resumed = uint256(_operatorKeySince) + window;
        if (resumed <= answerDeadline) return answerDeadline; // no key change inside the window
        uint256 delay = timelockDelay();
        if (delay > MAX_KEY_GAP_DELAY) delay = MAX_KEY_GAP_DELAY;
        uint256 bound = answerDeadline + delay + window;
        return resumed < bound ? resumed : bound;
    }

    /// @inheritdoc IClearingVault
    function consumption(bytes32 guaranteeId) external view returns (Consumption) {
        return VaultLedger.consumption(_books, guaranteeId);
    }

    /// @notice Whether `registry` is a trusted validation registry for V2 remuneration.
    function isTrustedRegistry(address registry) external view returns (bool) {
        return _books.isTrustedRegistry[registry];
    }

    /// @inheritdoc IClearingVault
    function isVerdictPinned(bytes32 requestHash) external view returns (bool) {
        return _books.pinnedVerdicts[requestHash];
    }

    /// @notice The recipient of the V1 reserve of `guaranteeId`, whom {collectReserve} pays (zero for a V2
    /// reserve and for none).
    function v1ReserveRecipient(bytes32 guaranteeId) external view returns (address) {
        return _books.v1ReserveRecipient[guaranteeId];
    }

    /// @notice All timings.
    function timings() external view returns (Timings memory) {
        return _timings;
    }

    /// @inheritdoc IClearingVault
    function challengeWindow() external view returns (uint64) {
        return _timings.challengeWindow;
    }

    /// @inheritdoc IClearingVault
    function paymentWindow() external view returns (uint64) {
        return _timings.paymentWindow;
    }

    /// @inheritdoc IClearingVault
    function defaultWindow() external view returns (uint64) {
        return _timings.defaultWindow;
    }

    // ------------------------------------------------------------------ internal

    function _credit(address user, address asset, uint256 amount) private {
        uint128 balance = _books.accounts[user][asset].balance + SafeCast.toUint128(amount);
        _books.accounts[user][asset].balance = balance;
        emit Deposited(user, asset, amount, balance);
    }

    function _readyAt(WithdrawalRequest memory request) private view returns (uint64) {
        uint64 underCurrentTimings = request.requestedAt + _timings.withdrawalGracePeriod;
        return underCurrentTimings > request.finalizableAt ? underCurrentTimings : request.finalizableAt;
    }

    /// @dev What certificates are checked against: the verifier, the domain separator and Core's key.
    function _authority() private view returns (VaultCertificates.Authority memory) {
        return VaultCertificates.Authority(guaranteeVerifier, _domainSeparator(), _operatorKeyNow());
    }

    /// @dev The operator's key (all zero while none is set): the 256 bytes of its EIP-2537 encoding, copied
    /// from the data contract's code past its leading STOP byte straight into the struct's memory.
    function _operatorKeyNow() private view returns (BLS.G2Point memory key) {
        address data = _operatorKeyData;
        if (data == address(0)) return key;
        assembly ("memory-safe") {
            extcodecopy(data, key, 1, 0x100)
        }
    }

    /// @dev The cached EIP-712 domain separator, recomputed only on another chain (after a fork).
    function _domainSeparator() private view returns (bytes32) {
        if (block.chainid == _DOMAIN_CHAIN_ID) return _DOMAIN_SEPARATOR;
        return GuaranteeSignature.domainSeparator(EIP712_NAME, EIP712_VERSION, block.chainid, address(this));
    }

    /// @dev CONFIG_ROLE (trusted registries, timings) and KEY_MANAGER_ROLE (the BLS key) are timelocked;
    /// PAUSER_ROLE is not (it moves neither funds nor keys; a pause never blocks creditors).
    function _isTimelockedRole(bytes32 role) internal pure override returns (bool) {
        return role == CONFIG_ROLE || role == KEY_MANAGER_ROLE;
    }

    function _inSetup() internal view override returns (bool) {
        return !setupFinished;
    }

    function _checkOperatorKey(BLS.G2Point calldata key) private view {
        if (!guaranteeVerifier.isValidOperatorKey(key)) revert InvalidOperatorKey();
    }

    /// @dev Reverts unless the timings keep the invariant {setTimings} states: `cycleLength`, `paymentWindow`
    /// and `challengeWindow` non-zero, and `MAX_WITHDRAWAL_GRACE_PERIOD >= withdrawalGracePeriod >` the
    /// clearing path (docs/protocol.md, grace-period invariant).
    function _checkTimings(Timings memory t) private pure {
        if (t.cycleLength == 0) revert ZeroCycleLength();
        if (t.paymentWindow == 0) revert ZeroPaymentWindow();
        if (t.challengeWindow == 0) revert ZeroChallengeWindow();
        uint256 clearingPath = uint256(t.cycleLength) +
            t.commitDelay +
            t.confirmationLag +
            2 * uint256(t.challengeWindow) +
            t.paymentWindow +
            t.defaultWindow;
        if (t.withdrawalGracePeriod <= clearingPath)
            revert GracePeriodTooShort(t.withdrawalGracePeriod, clearingPath);
        if (t.withdrawalGracePeriod > MAX_WITHDRAWAL_GRACE_PERIOD) {
            revert GracePeriodTooLong(t.withdrawalGracePeriod, MAX_WITHDRAWAL_GRACE_PERIOD);
        }
    }
}
