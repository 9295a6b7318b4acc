// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {TimelockedRoles} from "./access/TimelockedRoles.sol";
import {IClearingVault} from "./interfaces/IClearingVault.sol";
import {IValidationRegistry} from "./interfaces/IValidationRegistry.sol";
import {CertificateCodec} from "./lib/CertificateCodec.sol";
import {GuaranteeSignature} from "./lib/GuaranteeSignature.sol";
import {VaultChecks} from "./vault/VaultChecks.sol";

/// @title Vault
/// @notice Holds payers' collateral (ETH as address(0) and allow-listed ERC-20 tokens), the obligations of
/// committed clearing cycles, delayed withdrawals, and the on-chain record of consumed V2 guarantees.
/// @dev Invariant: for every asset, the Vault's holdings equal the sum of user balances (funds owed to
/// clearing leave the Vault at once in {coverDefault}); the sum is not stored (it would cost two storage
/// accesses on every deposit, withdrawal and remuneration and nothing on chain reads it): indexers add up
/// the balance events. Pausing blocks deposits and
/// withdrawals only; obligations, default coverage and remuneration keep working so that creditors are
/// never held hostage by a pause.
contract Vault is IClearingVault, TimelockedRoles, Pausable, ReentrancyGuardTransient {
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

    /// @dev One slot: every path that moves collateral reads and writes both. `locked` is the committed
    /// obligations plus the registered reserves; free collateral is `balance - locked`. Amounts
    /// are capped at 2^128 - 1 (a deposit beyond reverts in SafeCast), far above any token supply in use.
    struct Account {
        uint128 balance;
        uint128 locked;
    }

    /// @notice A seller's on-chain reserve of a pending guarantee's amount (see {registerReserve}: a V2 or
    /// a V1 certificate, where `expiresAt` is the time from which the reserve can be collected).
    /// @dev Two slots; `amount` fits 96 bits (larger guarantees cannot be reserved).
    struct Reserve {
        address user;
        uint64 expiresAt;
        address asset;
        uint96 amount;
    }

    /// @dev The operator's BLS key (G2) in six words instead of EIP-2537's eight: each Fp element's top 16
    /// bytes are zero, so `xHigh` and `yHigh` hold the high 16 bytes of c0 and c1 side by side (two cold
    /// slots less per remuneration). All zero while no key is set (the identity is never accepted as a key).
    struct PackedG2 {
        bytes32 xHigh;
        bytes32 xC0Low;
        bytes32 xC1Low;
        bytes32 yHigh;
        bytes32 yC0Low;
        bytes32 yC1Low;
    }

    /// @notice An open withdrawal request (one per user and asset).
    /// @dev `finalizableAt` is the time it was given; see {withdrawalFinalizableAt} for when it is ready.
    struct WithdrawalRequest {
        uint64 id; // id and both times share one slot
        uint64 requestedAt;
        uint64 finalizableAt;
        uint256 amount;
    }

    /// @dev The EIP-712 domain separator of guarantees and the chain it was computed for.
    bytes32 private immutable _DOMAIN_SEPARATOR;
    uint256 private immutable _DOMAIN_CHAIN_ID;

    /// @notice The stateless helper this Vault deployed in its constructor (timing invariant, V1 certificates,
    /// listings in committed cycles): separate only for the EIP-170 code size limit.
    VaultChecks public immutable checks;

    /// @notice The ClearingHouse allowed to call the clearing hooks (set once).
    address public clearingHouse;
    /// @notice Id the next withdrawal request gets (ids start at 1).
    uint256 public nextWithdrawalId = 1;

    Timings private _timings;
    PackedG2 private _operatorKey;

    /// @notice Whether the deployment wiring is over ({finishSetup}): from then on role grants, operator key
    /// changes, new trusted registries and timing changes are timelocked.
    bool public setupFinished;

    /// @notice Whether `token` may be deposited.
    mapping(address token => bool) public isTokenAllowed;
    /// @notice Whether `registry` is a trusted validation registry for V2 remuneration.
    mapping(address registry => bool) public isTrustedRegistry;
    /// @inheritdoc IClearingVault
    mapping(bytes32 guaranteeId => Consumption) public consumption;

    mapping(address user => mapping(address asset => Account)) private _accounts;
    mapping(address user => mapping(address asset => WithdrawalRequest)) private _withdrawals;
    /// @dev The part of `Account.locked` held by reserves (the rest is obligations).
    mapping(address user => mapping(address asset => uint256)) private _reserved;
    mapping(bytes32 guaranteeId => Reserve) private _reserves;
    /// @notice The recipient of the V1 reserve of `guaranteeId`, whom {collectReserve} pays (zero for a V2
    /// reserve and for none).
    mapping(bytes32 guaranteeId => address) public v1ReserveRecipient;

    /// @notice `user` deposited `amount` of `asset`; `balance` is the new balance.
    event Deposited(address indexed user, address indexed asset, uint256 amount, uint256 balance);
    /// @notice `user` asked to withdraw `amount` of `asset`, finalizable from `finalizableAt`.
    event WithdrawalRequested(
        uint256 indexed withdrawalId,
        address indexed user,
        address indexed asset,
        uint256 amount,
        uint64 finalizableAt
    );
    /// @notice `user` cancelled the withdrawal `withdrawalId`.
    event WithdrawalCancelled(uint256 indexed withdrawalId, address indexed user, address indexed asset);
    /// @notice The withdrawal `withdrawalId` closed, paying `paid` of the `requested` amount.
    event WithdrawalFinalized(
        uint256 indexed withdrawalId,
        address indexed user,
        address indexed asset,
        uint256 requested,
        uint256 paid
    );
    /// @notice A committed cycle added `amount` to `user`'s obligation; `obligation` is the new total.
    event ObligationRecorded(address indexed user, address indexed asset, uint256 amount, uint256 obligation);
    /// @notice A paid net debit released `amount` of `user`'s obligation; `obligation` is the new total.
    event ObligationReleased(address indexed user, address indexed asset, uint256 amount, uint256 obligation);
    /// @notice `user`'s unpaid `obligation` was resolved by moving `covered` of its collateral to clearing.
    event DefaultCovered(address indexed user, address indexed asset, uint256 obligation, uint256 covered);
    /// @notice The V2 guarantee `guaranteeId` was netted in a committed cycle.
    event GuaranteeNetted(bytes32 indexed guaranteeId);
    /// @notice A committed cycle listed `guaranteeId`, which was already consumed (`how`); it was skipped.
    event GuaranteeNettingSkipped(bytes32 indexed guaranteeId, Consumption how);
    /// @notice The V2 guarantee `guaranteeId` passed validation and `amount` was paid to `recipient`.
    event GuaranteeRemunerated(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount
    );
    /// @notice `amount` of `user`'s collateral is reserved for the V2 guarantee `guaranteeId` to `recipient`
    /// until it is remunerated, netted or `expiresAt`.
    event ReserveRegistered(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount,
        uint64 expiresAt
    );
    /// @notice `amount` of `user`'s collateral is reserved for the V1 guarantee `guaranteeId` to `recipient`
    /// until the guarantee is proven cleared (netted) or, from `collectableAt`, collected for `recipient`.
    event V1ReserveRegistered(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount,
        uint64 collectableAt
    );
    /// @notice The reserve of `guaranteeId` no longer holds `amount` of `user`'s collateral.
    event ReserveReleased(bytes32 indexed guaranteeId, address indexed user, address asset, uint256 amount);
    /// @notice The ClearingHouse was set.
    event ClearingHouseSet(address indexed clearingHouse);
    /// @notice The operator's BLS key changed; `keyHash` is keccak256 of the EIP-2537 encoding.
    event OperatorKeyRotated(bytes32 indexed keyHash, BLS.G2Point key);
    /// @notice `token` was added to (`allowed`) or removed from the deposit allow-list.
    event TokenAllowListUpdated(address indexed token, bool allowed);
    /// @notice `registry` was added to (`trusted`) or removed from the trusted validation registries.
    event TrustedRegistryUpdated(address indexed registry, bool trusted);
    /// @notice The protocol timings changed.
    event TimingsUpdated(Timings timings);
    /// @notice Setup is over: role grants, operator key changes, new trusted registries and timings are timelocked.
    event SetupFinished();
    /// @notice `key` was scheduled (as `operation`) to become the operator key from `readyAt`.
    event OperatorKeyScheduled(bytes32 indexed keyHash, BLS.G2Point key, bytes32 operation, uint48 readyAt);
    /// @notice The operator key `keyHash` was removed at once (remuneration stops until a new key is due).
    event OperatorKeyRevoked(bytes32 indexed keyHash);
    /// @notice `registry` was scheduled (as `operation`) to become trusted from `readyAt`.
    event TrustedRegistryScheduled(address indexed registry, bytes32 operation, uint48 readyAt);
    /// @notice `timings` were scheduled (as `operation`) to replace the current timings from `readyAt`.
    event TimingsScheduled(Timings timings, bytes32 operation, uint48 readyAt);

    /// @notice The amount is zero.
    error ZeroAmount();
    /// @notice `token` is not on the deposit allow-list.
    error TokenNotAllowed(address token);
    /// @notice `token` is the zero address or has no code.
    error InvalidToken(address token);
    /// @notice The deposit transferred no tokens to the Vault.
    error NothingReceived(address token);
    /// @notice `amount` exceeds `user`'s `balance` in `asset`.
    error WithdrawalExceedsBalance(address user, address asset, uint256 balance, uint256 amount);
    /// @notice `user` already has the open withdrawal `withdrawalId` in `asset`.
    error WithdrawalAlreadyPending(address user, address asset, uint64 withdrawalId);
    /// @notice `user` has no open withdrawal in `asset`.
    error NoPendingWithdrawal(address user, address asset);
    /// @notice The withdrawal `withdrawalId` cannot be finalized before `finalizableAt`.
    error WithdrawalNotReady(uint64 withdrawalId, uint64 finalizableAt);
    /// @notice Only the ClearingHouse may call this; `caller` is not it.
    error NotClearingHouse(address caller);
    /// @notice The ClearingHouse is already set to `current`.
    error ClearingHouseAlreadySet(address current);
    /// @notice `clearingHouse` is the zero address or has no code.
    error InvalidClearingHouse(address clearingHouse);
    /// @notice Releasing or covering `amount` exceeds `user`'s recorded `obligation` in `asset`.
    error ObligationExceeded(address user, address asset, uint256 obligation, uint256 amount);
    /// @notice The V2 guarantee `guaranteeId` was already consumed (`how`).
    error GuaranteeAlreadyConsumed(bytes32 guaranteeId, Consumption how);
    /// @notice `cycleLength` is zero.
    error ZeroCycleLength();
    /// @notice `paymentWindow` is zero.
    error ZeroPaymentWindow();
    /// @notice `challengeWindow` is zero (it would switch off challenges and the guardian's veto).
    error ZeroChallengeWindow();
    /// @notice `withdrawalGracePeriod` must be greater than `minimumExclusive` (the clearing path's length).
    error GracePeriodTooShort(uint64 withdrawalGracePeriod, uint256 minimumExclusive);
    /// @notice `withdrawalGracePeriod` exceeds {MAX_WITHDRAWAL_GRACE_PERIOD}.
    error GracePeriodTooLong(uint64 withdrawalGracePeriod, uint64 maximum);
    /// @notice The BLS key is not a valid G2 point of the prime-order subgroup (or is the identity).
    error InvalidOperatorKey();
    /// @notice `registry` is the zero address or has no code.
    error InvalidRegistry(address registry);
    /// @notice {finishSetup} was already called.
    error SetupAlreadyFinished();

    /// @notice Only V2 certificates can be remunerated; this one has `version`.
    error NotV2Certificate(uint64 version);
    /// @notice The certificate's domain `actual` is not this deployment's `expected` domain.
    error CertificateDomainMismatch(bytes32 expected, bytes32 actual);
    /// @notice The certificate's guarantee id `actual` is not the id `expected` derived from its fields.
    error GuaranteeIdMismatch(bytes32 expected, bytes32 actual);
    /// @notice No operator BLS key has been set.
    error OperatorKeyNotSet();
    /// @notice The BLS signature does not verify against the operator key.
    error InvalidCertificateSignature();
    /// @notice The policy's `registry` is not a trusted validation registry.
    error UntrustedRegistry(address registry);
    /// @notice The policy's validator has not answered the request `requestHash` (or no such request exists).
    error ValidationResponseMissing(bytes32 requestHash);
    /// @notice The validator's `response` is below the policy's `minScore`.
    error ValidationScoreTooLow(uint8 response, uint8 minScore);
    /// @notice The response's tag (keccak256 `actualHash`) differs from the policy's tag `expected`.
    error ValidationTagMismatch(string expected, bytes32 actualHash);
    /// @notice The response was last updated at `lastUpdate`, after the policy deadline `deadline`.
    error ValidationAfterDeadline(uint64 lastUpdate, uint64 deadline);
    /// @notice `guaranteeId` already has a reserve.
    error ReserveAlreadyRegistered(bytes32 guaranteeId);
    /// @notice `guaranteeId` has no reserve.
    error ReserveNotFound(bytes32 guaranteeId);
    /// @notice The reserve of `guaranteeId` holds until `expiresAt` unless its guarantee is consumed first.
    error ReserveStillActive(bytes32 guaranteeId, uint64 expiresAt);
    /// @notice A reserve can only be registered up to the validation deadline `deadline`.
    error ReserveAfterDeadline(uint64 deadline);
    /// @notice `user`'s free collateral `free` in `asset` does not cover `amount`.
    error InsufficientFreeCollateral(address user, address asset, uint256 free, uint256 amount);
    /// @notice The payer's signature over the guarantee is not `payer`'s (raised by {checks}; the selector of
    /// GuaranteeSignature's error).
    error InvalidPayerSignature(address payer);
    /// @notice The V1 reserve of `guaranteeId` can be collected only from `collectableAt` (until then Core's
    /// clearing of the guarantee is awaited).
    error ReserveNotYetCollectable(bytes32 guaranteeId, uint64 collectableAt);
    /// @notice Only V1 certificates can back a V1 reserve; this one has `version` (raised by {checks}).
    error NotV1Certificate(uint64 version);
    /// @notice Cycle `cycleId` is not committed, was vetoed, or its challenge window (until
    /// `challengeDeadline`) is still open, so it cannot prove a listing (raised by {checks}).
    error CycleNotSettled(uint256 cycleId, uint64 challengeDeadline);
    /// @notice The V1 reserve's guarantee (its payer, recipient, asset and amount) is not a leaf of cycle
    /// `cycleId`'s guarantees root under the given proof (raised by {checks}).
    error GuaranteeNotListed(bytes32 guaranteeId, uint256 cycleId);

    /// @dev Tags of the timelocked operation ids (TimelockedRoles).
    bytes32 private constant _KEY_TAG = keccak256("VAULT_OPERATOR_KEY");
    bytes32 private constant _REGISTRY_TAG = keccak256("VAULT_TRUSTED_REGISTRY");
    bytes32 private constant _TIMINGS_TAG = keccak256("VAULT_TIMINGS");

    /// @dev Bytes in a word (the claims' version word).
    uint256 private constant _WORD = 32;

    /// @dev Bits in half a word, and the mask of the low half (the packed operator key).
    uint256 private constant _HALF_WORD_BITS = 128;
    bytes32 private constant _LOW_HALF_MASK = bytes32(uint256(type(uint128).max));

    modifier onlyClearingHouse() {
        if (msg.sender != clearingHouse) revert NotClearingHouse(msg.sender);
        _;
    }

    /// @param admin Receives the admin, config, key-manager and pauser roles.
    /// @param adminTransferDelay Seconds between `beginDefaultAdminTransfer` and the earliest
    /// `acceptDefaultAdminTransfer` (the default admin changes in two steps, never at once).
    /// @param timings_ Initial timings (checked as in {setTimings}).
    constructor(
        address admin,
        uint48 adminTransferDelay,
        Timings memory timings_
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        checks = new VaultChecks();
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
        checks.checkTimings(timings_);
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
        uint256 balance = _accounts[msg.sender][asset].balance;
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
        Account storage account = _accounts[msg.sender][asset];
        uint256 free = _free(account);
        uint256 paid = request.amount < free ? request.amount : free;
        delete _withdrawals[msg.sender][asset];
        // paid <= free <= balance < 2^128
        account.balance -= uint128(paid);
        emit WithdrawalFinalized(request.id, msg.sender, asset, request.amount, paid);
        _send(asset, msg.sender, paid);
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
    /// score >= minScore, the policy's tag and a last update no later than the deadline. Not pausable.
    function remunerate(
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    ) external nonReentrant {
        (
            CertificateCodec.CertificateClaims memory c,
            CertificateCodec.ValidationPolicy memory p
        ) = _verifiedGuarantee(claims, signature, payerScheme, payerSignature);
        Consumption how = consumption[c.guaranteeId];
        if (how != Consumption.None) revert GuaranteeAlreadyConsumed(c.guaranteeId, how);
        if (c.amount == 0) revert ZeroAmount();
        _checkValidation(p, c.guaranteeId);
        Account storage account = _accounts[c.user][c.asset];
        uint256 free = _free(account);
        // The guarantee's own reserve is read only when it is needed (one storage read less otherwise); a
        // reserve left behind is released by anyone afterwards ({releaseReserve}).
        if (free < c.amount) free += _releaseOwnReserve(c.guaranteeId, c.user, c.asset, account);
        if (free < c.amount) revert InsufficientFreeCollateral(c.user, c.asset, free, c.amount);

        consumption[c.guaranteeId] = Consumption.Remunerated;
        // c.amount <= free <= balance < 2^128
        account.balance -= uint128(c.amount);
        emit GuaranteeRemunerated(c.guaranteeId, c.user, c.recipient, c.asset, c.amount);
        _send(c.asset, c.recipient, c.amount);
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
    /// payer's signature are checked by {checks} (`CertificateDomainMismatch`, `GuaranteeIdMismatch`,
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
        if (claims.length >= _WORD && uint256(bytes32(claims[:_WORD])) == CertificateCodec.VERSION_V1) {
            // Same arguments: {checks} verifies the V1 certificate from this call's calldata.
            bytes memory result = _check(VaultChecks.verifyV1.selector);
            VaultChecks.V1Reserve memory v;
            // A static struct in memory is laid out as its ABI encoding (one word per member), which {checks}
            // returned with clean values: no decoder needed.
            assembly ("memory-safe") {
                v := add(result, 0x20)
            }
            _reserve(v.guaranteeId, v.user, v.asset, v.amount, v.registerBy, v.collectableAt);
            v1ReserveRecipient[v.guaranteeId] = v.recipient;
            emit V1ReserveRegistered(v.guaranteeId, v.user, v.recipient, v.asset, v.amount, v.collectableAt);
            return;
        }
        (
            CertificateCodec.CertificateClaims memory c,
            CertificateCodec.ValidationPolicy memory p
        ) = _verifiedGuarantee(claims, signature, payerScheme, payerSignature);
        // After the deadline the verdict is final: the seller remunerates, or a live Core nets the guarantee
        // within the clearing path, which the grace period exceeds ({setTimings}).
        uint64 expiresAt = p.deadline + _timings.withdrawalGracePeriod;
        _reserve(c.guaranteeId, c.user, c.asset, c.amount, p.deadline, expiresAt);
        emit ReserveRegistered(c.guaranteeId, c.user, c.recipient, c.asset, c.amount, expiresAt);
    }

    /// @notice Releases the V1 reserve of `guaranteeId` by proving that Core cleared its guarantee: the leaf
    /// (the reserve's guarantee id, payer, recipient, asset, amount, and a signature hash) is in the guarantees
    /// root of a cycle that is committed, not vetoed and past its challenge deadline. Marks the guarantee
    /// netted (`GuaranteeNetted`, if not consumed yet) so it can never be collected or reserved again. Anyone
    /// may call (Core's keeper, the payer); leaves and proofs: Core's `GET /core/cycles/{id}/guarantees?payer=`.
    /// @dev Arguments: `(bytes32 guaranteeId, uint256 cycleId, bytes32 signatureHash, bytes32[] proof)`, the
    /// proof a StandardMerkleTree proof under the cycle's guarantees root; checked by {checks}
    /// (`ReserveNotFound`, `CycleNotSettled`, `GuaranteeNotListed`).
    /// @param guaranteeId The reserved V1 guarantee.
    function releaseListedReserve(
        bytes32 guaranteeId,
        uint256 /* cycleId */,
        bytes32 /* signatureHash */,
        bytes32[] calldata /* proof */
    ) external {
        _check(VaultChecks.checkListing.selector);
        if (consumption[guaranteeId] == Consumption.None) {
            consumption[guaranteeId] = Consumption.Netted;
            emit GuaranteeNetted(guaranteeId);
        }
        Reserve memory r = _reserves[guaranteeId];
        delete v1ReserveRecipient[guaranteeId];
        _release(guaranteeId, r, _accounts[r.user][r.asset]);
    }

    /// @notice Pays the recipient of the V1 reserve of `guaranteeId` out of the reserved collateral once Core
    /// has not cleared the guarantee by the reserve's `collectableAt` (`ReserveNotYetCollectable` before;
    /// `GuaranteeAlreadyConsumed` once marked netted). The guarantee is then consumed as `Remunerated`: a
    /// commit that lists it later skips it (`GuaranteeNettingSkipped`), and it cannot answer a challenge of
    /// its payer's debit. Anyone may call; the money goes to the recipient. Not pausable.
    /// @dev Pays min(amount, balance): only an over-committed payer (Core's fault) can have less.
    /// @param guaranteeId The reserved V1 guarantee.
    function collectReserve(bytes32 guaranteeId) external nonReentrant {
        Reserve memory r = _reserves[guaranteeId];
        address recipient = v1ReserveRecipient[guaranteeId];
        if (r.user == address(0) || recipient == address(0)) revert ReserveNotFound(guaranteeId);
        Consumption how = consumption[guaranteeId];
        if (how != Consumption.None) revert GuaranteeAlreadyConsumed(guaranteeId, how);
        if (block.timestamp < r.expiresAt) revert ReserveNotYetCollectable(guaranteeId, r.expiresAt);

        consumption[guaranteeId] = Consumption.Remunerated;
        delete v1ReserveRecipient[guaranteeId];
        Account storage account = _accounts[r.user][r.asset];
        _release(guaranteeId, r, account);
        uint128 balance = account.balance;
        uint128 paid = r.amount < balance ? r.amount : balance;
        account.balance = balance - paid;
        emit GuaranteeRemunerated(guaranteeId, r.user, recipient, r.asset, paid);
        _send(r.asset, recipient, paid);
    }

    /// @notice Frees the collateral a reserve holds once its guarantee was consumed (remunerated or netted)
    /// or, for a V2 reserve, it expired; callable by anyone (Core's keeper, the payer). A V1 reserve never
    /// expires: it is released once its guarantee is consumed (a commit marked it netted), proven cleared
    /// ({releaseListedReserve}) or collected ({collectReserve}).
    function releaseReserve(bytes32 guaranteeId) external {
        Reserve memory r = _reserves[guaranteeId];
        if (r.user == address(0)) revert ReserveNotFound(guaranteeId);
        address recipient = v1ReserveRecipient[guaranteeId];
        if (
            consumption[guaranteeId] == Consumption.None &&
            (recipient != address(0) || block.timestamp < r.expiresAt)
        ) revert ReserveStillActive(guaranteeId, r.expiresAt);
        if (recipient != address(0)) delete v1ReserveRecipient[guaranteeId];
        _release(guaranteeId, r, _accounts[r.user][r.asset]);
    }

    // ------------------------------------------------------------ clearing hooks

    /// @inheritdoc IClearingVault
    function recordObligations(Obligation[] calldata obligations) external onlyClearingHouse {
        for (uint256 i = 0; i < obligations.length; ++i) {
            Obligation calldata o = obligations[i];
            Account storage account = _accounts[o.debtor][o.asset];
            uint128 locked = account.locked + SafeCast.toUint128(o.amount);
            account.locked = locked;
            emit ObligationRecorded(o.debtor, o.asset, o.amount, locked - _reserved[o.debtor][o.asset]);
        }
    }

    /// @inheritdoc IClearingVault
    function releaseObligation(address user, address asset, uint256 amount) external onlyClearingHouse {
        Account storage account = _accounts[user][asset];
        uint256 obligation = account.locked - _reserved[user][asset];
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
        Account storage account = _accounts[user][asset];
        uint256 obligation = account.locked - _reserved[user][asset];
        if (amount > obligation) revert ObligationExceeded(user, asset, obligation, amount);
        uint256 balance = account.balance;
        covered = amount < balance ? amount : balance;
        // amount <= obligation <= locked and covered <= balance, all < 2^128
        account.locked -= uint128(amount);
        account.balance = uint128(balance - covered);
        emit DefaultCovered(user, asset, amount, covered);
        _send(asset, clearingHouse, covered);
    }

    /// @inheritdoc IClearingVault
    /// @dev An id already consumed is skipped with `GuaranteeNettingSkipped` instead of reverting the whole
    /// commit: one front-running `remunerate` must not cost the operator a reverted commit (the
    /// over-charge it leaves is answerable on chain, docs/clearing.md "Skipped ids").
    function markNetted(bytes32[] calldata guaranteeIds) external onlyClearingHouse returns (uint256 netted) {
        for (uint256 i = 0; i < guaranteeIds.length; ++i) {
            bytes32 id = guaranteeIds[i];
            Consumption how = consumption[id];
            if (how != Consumption.None) {
                emit GuaranteeNettingSkipped(id, how);
                continue;
            }
            consumption[id] = Consumption.Netted;
            ++netted;
            emit GuaranteeNetted(id);
        }
    }

    // --------------------------------------------------------------------- admin

    /// @notice Sets the ClearingHouse (once; it owns the obligations it records).
    function setClearingHouse(address clearingHouse_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (clearingHouse != address(0)) revert ClearingHouseAlreadySet(clearingHouse);
        if (clearingHouse_.code.length == 0) revert InvalidClearingHouse(clearingHouse_);
        clearingHouse = clearingHouse_;
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
        _operatorKey = PackedG2({
            xHigh: (key.x_c0_a << _HALF_WORD_BITS) | (key.x_c1_a & _LOW_HALF_MASK),
            xC0Low: key.x_c0_b,
            xC1Low: key.x_c1_b,
            yHigh: (key.y_c0_a << _HALF_WORD_BITS) | (key.y_c1_a & _LOW_HALF_MASK),
            yC0Low: key.y_c0_b,
            yC1Low: key.y_c1_b
        });
        emit OperatorKeyRotated(keccak256(abi.encode(key)), key);
    }

    /// @notice Removes the operator key at once (a leaked key): no certificate verifies until a scheduled
    /// key is executed. Payers' signatures still protect collateral meanwhile; this stops forged certificates.
    function revokeOperatorKey() external onlyRole(KEY_MANAGER_ROLE) {
        bytes32 keyHash = keccak256(abi.encode(_unpackedOperatorKey()));
        delete _operatorKey;
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
        isTrustedRegistry[registry] = trusted;
        emit TrustedRegistryUpdated(registry, trusted);
    }

    /// @notice Sets all timings at once, enforcing `challengeWindow > 0` and `withdrawalGracePeriod >
    /// cycleLength + commitDelay + confirmationLag + 2 * challengeWindow + paymentWindow + defaultWindow`
    /// (docs/protocol.md, grace-period invariant; the ClearingHouse's answer window is as long as the challenge
    /// window; Core's commits trail the chain by `confirmationLag`). Checked by {checks}. During setup at once;
    /// afterwards every change (shorter or longer) is timelocked: a first call schedules `timings_`
    /// ({TimingsScheduled}) and a second call from {timelockDelay} later sets them.
    /// @dev A longer grace period also applies to open withdrawal requests (see {withdrawalFinalizableAt});
    /// a shorter one does not. Reverts {OperationNotReady} for a second call before the delay; the default
    /// admin cancels a schedule with `cancelOperation` (docs/contracts.md, threat model: CONFIG_ROLE).
    function setTimings(Timings calldata timings_) external onlyRole(CONFIG_ROLE) {
        checks.checkTimings(timings_);
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
        return _accounts[user][asset].balance;
    }

    /// @notice `user`'s unpaid committed net debits in `asset`.
    function obligationOf(address user, address asset) external view returns (uint256) {
        return _accounts[user][asset].locked - _reserved[user][asset];
    }

    /// @notice The reserve of `guaranteeId` (all zero when none).
    function reserveOf(bytes32 guaranteeId) external view returns (Reserve memory) {
        return _reserves[guaranteeId];
    }

    /// @notice `user`'s balance not held by obligations or reserves: what a withdrawal or remuneration may take.
    function freeCollateralOf(address user, address asset) external view returns (uint256) {
        return _free(_accounts[user][asset]);
    }

    /// @notice How each of `guaranteeIds` was consumed (Core checks a plan's V2 ids before committing it).
    function consumptionOf(bytes32[] calldata guaranteeIds) external view returns (Consumption[] memory how) {
        how = new Consumption[](guaranteeIds.length);
        for (uint256 i = 0; i < guaranteeIds.length; ++i) how[i] = consumption[guaranteeIds[i]];
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

    /// @notice The operator's BLS public key (EIP-2537 encoding; all zero while none is set).
    function operatorKey() external view returns (BLS.G2Point memory) {
        return _unpackedOperatorKey();
    }

    /// @notice Whether the operator's BLS key has been set.
    function operatorKeySet() public view returns (bool) {
        PackedG2 memory key = _operatorKey;
        return (key.xHigh | key.xC0Low | key.xC1Low | key.yHigh | key.yC0Low | key.yC1Low) != bytes32(0);
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
        uint128 balance = _accounts[user][asset].balance + SafeCast.toUint128(amount);
        _accounts[user][asset].balance = balance;
        emit Deposited(user, asset, amount, balance);
    }

    function _free(Account storage account) private view returns (uint256) {
        (uint256 balance, uint256 locked) = (account.balance, account.locked);
        return balance > locked ? balance - locked : 0;
    }

    /// @dev Registers a reserve of `amount` of `user`'s free `asset` collateral for `guaranteeId` until
    /// `expiresAt`; checks, in order: not consumed, no reserve yet, non-zero amount, not after `registerBy`,
    /// free collateral.
    function _reserve(
        bytes32 guaranteeId,
        address user,
        address asset,
        uint256 amount,
        uint64 registerBy,
        uint64 expiresAt
    ) private {
        Consumption how = consumption[guaranteeId];
        if (how != Consumption.None) revert GuaranteeAlreadyConsumed(guaranteeId, how);
        if (_reserves[guaranteeId].user != address(0)) revert ReserveAlreadyRegistered(guaranteeId);
        if (amount == 0) revert ZeroAmount();
        if (block.timestamp > registerBy) revert ReserveAfterDeadline(registerBy);
        Account storage account = _accounts[user][asset];
        uint256 free = _free(account);
        if (free < amount) revert InsufficientFreeCollateral(user, asset, free, amount);
        _reserves[guaranteeId] = Reserve({
            user: user,
            expiresAt: expiresAt,
            asset: asset,
            amount: SafeCast.toUint96(amount)
        });
        _reserved[user][asset] += amount;
        // amount <= free < 2^128
        account.locked += uint128(amount);
    }

    /// @dev Releases `guaranteeId`'s reserve (if any) during its remuneration; returns the amount it held. A
    /// reserve of another payer or asset under the same id (only possible if Core certified two guarantees
    /// with one id and the payer signed both) is left alone.
    function _releaseOwnReserve(
        bytes32 guaranteeId,
        address user,
        address asset,
        Account storage account
    ) private returns (uint256) {
        Reserve memory r = _reserves[guaranteeId];
        if (r.user != user || r.asset != asset) return 0; // also "no reserve": a payer is never address(0)
        _release(guaranteeId, r, account);
        return r.amount;
    }

    function _release(bytes32 guaranteeId, Reserve memory r, Account storage account) private {
        delete _reserves[guaranteeId];
        _reserved[r.user][r.asset] -= r.amount;
        account.locked -= r.amount;
        emit ReserveReleased(guaranteeId, r.user, r.asset, r.amount);
    }

    function _unpackedOperatorKey() private view returns (BLS.G2Point memory key) {
        PackedG2 memory packed = _operatorKey;
        key.x_c0_a = packed.xHigh >> _HALF_WORD_BITS;
        key.x_c0_b = packed.xC0Low;
        key.x_c1_a = packed.xHigh & _LOW_HALF_MASK;
        key.x_c1_b = packed.xC1Low;
        key.y_c0_a = packed.yHigh >> _HALF_WORD_BITS;
        key.y_c0_b = packed.yC0Low;
        key.y_c1_a = packed.yHigh & _LOW_HALF_MASK;
        key.y_c1_b = packed.yC1Low;
    }

    function _send(address asset, address to, uint256 amount) private {
        if (amount == 0) return;
        if (asset == ETH) Address.sendValue(payable(to), amount);
        else IERC20(asset).safeTransfer(to, amount);
    }

    function _readyAt(WithdrawalRequest memory request) private view returns (uint64) {
        uint64 underCurrentTimings = request.requestedAt + _timings.withdrawalGracePeriod;
        return underCurrentTimings > request.finalizableAt ? underCurrentTimings : request.finalizableAt;
    }

    /// @dev Calls {checks} with this call's own arguments (its function `selector` takes the same ones and
    /// reads the rest from this Vault's views), bubbling up its revert.
    function _check(bytes4 selector) private view returns (bytes memory result) {
        bool ok;
        (ok, result) = address(checks).staticcall(bytes.concat(selector, msg.data[4:]));
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
    }

    /// @dev The certificate (V2, this deployment, Core's key) and the payer's own signature over it.
    function _verifiedGuarantee(
        bytes calldata claims,
        BLS.G1Point calldata signature,
        GuaranteeSignature.Scheme payerScheme,
        bytes calldata payerSignature
    )
        private
        view
        returns (CertificateCodec.CertificateClaims memory c, CertificateCodec.ValidationPolicy memory p)
    {
        if (claims.length >= _WORD && uint256(bytes32(claims[:_WORD])) == CertificateCodec.VERSION_V1) {
            revert NotV2Certificate(CertificateCodec.VERSION_V1);
        }
        (c, p) = CertificateCodec.decodeV2Calldata(claims);
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, address(this));
        if (c.domain != domain) revert CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, address(this), c.user, c.reqId);
        if (c.guaranteeId != id) revert GuaranteeIdMismatch(id, c.guaranteeId);
        // Both signatures, and that a key is set, are checked in {checks} (code size).
        checks.checkSignatures(
            _unpackedOperatorKey(),
            claims,
            signature,
            GuaranteeSignature.digest(_domainSeparator(), GuaranteeSignature.structHashV2(c, p)),
            c.user,
            payerScheme,
            payerSignature
        );
    }

    /// @dev The cached EIP-712 domain separator, recomputed only on another chain (after a fork).
    function _domainSeparator() private view returns (bytes32) {
        if (block.chainid == _DOMAIN_CHAIN_ID) return _DOMAIN_SEPARATOR;
        return GuaranteeSignature.domainSeparator(EIP712_NAME, EIP712_VERSION, block.chainid, address(this));
    }

    function _checkValidation(CertificateCodec.ValidationPolicy memory p, bytes32 guaranteeId) private view {
        if (!isTrustedRegistry[p.registry]) revert UntrustedRegistry(p.registry);
        bytes32 requestHash = CertificateCodec.validationRequestHash(block.chainid, p, guaranteeId);
        // The verdict of the validator the signed policy names; the request hash binds its agent id.
        (bool responded, uint8 response, bytes32 tagHash, uint64 lastUpdate) = IValidationRegistry(p.registry)
            .verdictOf(requestHash, p.validator);
        if (!responded) revert ValidationResponseMissing(requestHash);
        if (response < p.minScore) revert ValidationScoreTooLow(response, p.minScore);
        if (tagHash != keccak256(bytes(p.tag))) revert ValidationTagMismatch(p.tag, tagHash);
        if (lastUpdate > p.deadline) revert ValidationAfterDeadline(lastUpdate, p.deadline);
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
        checks.checkOperatorKey(key); // reverts InvalidOperatorKey (code size: the check lives in {checks})
    }
}
