// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Address} from "@openzeppelin/contracts/utils/Address.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {BLS} from "solady/src/utils/ext/ithaca/BLS.sol";

import {IClearingVault} from "./interfaces/IClearingVault.sol";
import {IValidationRegistry} from "./interfaces/IValidationRegistry.sol";
import {BLSVerifier} from "./lib/BLSVerifier.sol";
import {CertificateCodec} from "./lib/CertificateCodec.sol";

/// @title Vault
/// @notice Holds payers' collateral (ETH as address(0) and allow-listed ERC-20 tokens), the obligations of
/// committed clearing cycles, delayed withdrawals, and the on-chain record of consumed V2 guarantees.
/// @dev Invariant: for every asset, the Vault's holdings equal `totalBalance(asset)`, the sum of user
/// balances (funds owed to clearing leave the Vault at once in {coverDefault}). Pausing blocks deposits and
/// withdrawals only; obligations, default coverage and remuneration keep working so that creditors are
/// never held hostage by a pause.
contract Vault is IClearingVault, AccessControlDefaultAdminRules, Pausable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @notice Role that sets the token allow-list, trusted registries and timings.
    bytes32 public constant CONFIG_ROLE = keccak256("CONFIG_ROLE");
    /// @notice Role that rotates the operator's BLS public key.
    bytes32 public constant KEY_MANAGER_ROLE = keccak256("KEY_MANAGER_ROLE");
    /// @notice Role that pauses and unpauses deposits and withdrawals.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice The asset id of ETH.
    address public constant ETH = address(0);
    /// @notice Upper bound on the withdrawal grace period, so collateral can never be frozen indefinitely.
    uint64 public constant MAX_WITHDRAWAL_GRACE_PERIOD = 30 days;

    /// @notice How a V2 guarantee was consumed on chain (a guarantee is paid at most once).
    enum Consumption {
        None,
        Remunerated,
        Netted
    }

    struct Account {
        uint256 balance;
        uint256 obligation;
    }

    /// @notice An open withdrawal request (one per user and asset).
    /// @dev `finalizableAt` is the time it was given; see {withdrawalFinalizableAt} for when it is ready.
    struct WithdrawalRequest {
        uint64 id; // id and both times share one slot
        uint64 requestedAt;
        uint64 finalizableAt;
        uint256 amount;
    }

    /// @notice The ClearingHouse allowed to call the clearing hooks (set once).
    address public clearingHouse;
    /// @notice Id the next withdrawal request gets (ids start at 1).
    uint256 public nextWithdrawalId = 1;
    /// @notice Whether the operator's BLS key has been set.
    bool public operatorKeySet;

    Timings private _timings;
    BLS.G1Point private _operatorKey;

    /// @notice Whether `token` may be deposited.
    mapping(address token => bool) public isTokenAllowed;
    /// @notice Whether `registry` is a trusted validation registry for V2 remuneration.
    mapping(address registry => bool) public isTrustedRegistry;
    /// @notice Sum of all user balances in `asset`.
    mapping(address asset => uint256) public totalBalance;
    /// @notice How the V2 guarantee `guaranteeId` was consumed, if at all.
    mapping(bytes32 guaranteeId => Consumption) public consumption;

    mapping(address user => mapping(address asset => Account)) private _accounts;
    mapping(address user => mapping(address asset => WithdrawalRequest)) private _withdrawals;

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
    /// @notice The V2 guarantee `guaranteeId` passed validation and `amount` was paid to `recipient`.
    event GuaranteeRemunerated(
        bytes32 indexed guaranteeId,
        address indexed user,
        address indexed recipient,
        address asset,
        uint256 amount
    );
    /// @notice The ClearingHouse was set.
    event ClearingHouseSet(address indexed clearingHouse);
    /// @notice The operator's BLS key changed; `keyHash` is keccak256 of the EIP-2537 encoding.
    event OperatorKeyRotated(bytes32 indexed keyHash, BLS.G1Point key);
    /// @notice `token` was added to (`allowed`) or removed from the deposit allow-list.
    event TokenAllowListUpdated(address indexed token, bool allowed);
    /// @notice `registry` was added to (`trusted`) or removed from the trusted validation registries.
    event TrustedRegistryUpdated(address indexed registry, bool trusted);
    /// @notice The protocol timings changed.
    event TimingsUpdated(Timings timings);

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
    /// @notice `withdrawalGracePeriod` must be greater than `minimumExclusive` (the clearing path's length).
    error GracePeriodTooShort(uint64 withdrawalGracePeriod, uint256 minimumExclusive);
    /// @notice `withdrawalGracePeriod` exceeds {MAX_WITHDRAWAL_GRACE_PERIOD}.
    error GracePeriodTooLong(uint64 withdrawalGracePeriod, uint64 maximum);
    /// @notice The BLS key is not a valid G1 point of the prime-order subgroup (or is the identity).
    error InvalidOperatorKey();
    /// @notice `registry` is the zero address or has no code.
    error InvalidRegistry(address registry);

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
    /// @notice The registry holds no request for this guarantee addressed to `expected` (it returned `actual`).
    error ValidatorMismatch(address expected, address actual);
    /// @notice The validation request names agent `actual`, the policy requires `expected`.
    error AgentIdMismatch(uint256 expected, uint256 actual);
    /// @notice The validator has not answered the request `requestHash` yet.
    error ValidationResponseMissing(bytes32 requestHash);
    /// @notice The validator's `response` is below the policy's `minScore`.
    error ValidationScoreTooLow(uint8 response, uint8 minScore);
    /// @notice The response's tag `actual` differs from the policy's tag `expected`.
    error ValidationTagMismatch(string expected, string actual);
    /// @notice The response was last updated at `lastUpdate`, after the policy deadline `deadline`.
    error ValidationAfterDeadline(uint256 lastUpdate, uint64 deadline);
    /// @notice `user`'s free collateral `free` in `asset` does not cover `amount`.
    error InsufficientFreeCollateral(address user, address asset, uint256 free, uint256 amount);

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
        _grantRole(CONFIG_ROLE, admin);
        _grantRole(KEY_MANAGER_ROLE, admin);
        _grantRole(PAUSER_ROLE, admin);
        _setTimings(timings_);
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
        uint256 free = freeCollateralOf(msg.sender, asset);
        uint256 paid = request.amount < free ? request.amount : free;
        delete _withdrawals[msg.sender][asset];
        _accounts[msg.sender][asset].balance -= paid;
        totalBalance[asset] -= paid;
        emit WithdrawalFinalized(request.id, msg.sender, asset, request.amount, paid);
        _send(asset, msg.sender, paid);
    }

    // -------------------------------------------------------------- remuneration

    /// @notice V2 validation path: pays a V2 guarantee whose validation passed from the payer's free
    /// collateral to the recipient. Anyone may submit it; the money always goes to the recipient.
    /// @param claims The raw certificate claims (docs/protocol.md, "Certificates"), exactly as Core signed them.
    /// @param signature Core's BLS signature over `claims` (G2, EIP-2537 form, POP tag).
    /// @dev Reverts without payment unless: the claims are V2 for this chain and Vault, the guarantee id
    /// matches its fields, the signature verifies against the operator key, the guarantee was neither
    /// remunerated nor netted, the policy's registry is trusted, and the registry's record for the
    /// validation request hash addressed to the policy's validator has the policy's agent id, an answer,
    /// a score >= minScore, the policy's tag and a last update no later than the deadline. Not pausable.
    function remunerate(bytes calldata claims, BLS.G2Point calldata signature) external nonReentrant {
        CertificateCodec.CertificateClaims memory c = _verifiedV2Claims(claims, signature);
        Consumption how = consumption[c.guaranteeId];
        if (how != Consumption.None) revert GuaranteeAlreadyConsumed(c.guaranteeId, how);
        if (c.amount == 0) revert ZeroAmount();
        _checkValidation(CertificateCodec.decodePolicy(c.policy), c.guaranteeId);
        uint256 free = freeCollateralOf(c.user, c.asset);
        if (free < c.amount) revert InsufficientFreeCollateral(c.user, c.asset, free, c.amount);

        consumption[c.guaranteeId] = Consumption.Remunerated;
        _accounts[c.user][c.asset].balance -= c.amount;
        totalBalance[c.asset] -= c.amount;
        emit GuaranteeRemunerated(c.guaranteeId, c.user, c.recipient, c.asset, c.amount);
        _send(c.asset, c.recipient, c.amount);
    }

    // ------------------------------------------------------------ clearing hooks

    /// @inheritdoc IClearingVault
    function recordObligations(Obligation[] calldata obligations) external onlyClearingHouse {
        for (uint256 i = 0; i < obligations.length; ++i) {
            Obligation calldata o = obligations[i];
            Account storage account = _accounts[o.debtor][o.asset];
            uint256 total = account.obligation + o.amount;
            account.obligation = total;
            emit ObligationRecorded(o.debtor, o.asset, o.amount, total);
        }
    }

    /// @inheritdoc IClearingVault
    function releaseObligation(address user, address asset, uint256 amount) external onlyClearingHouse {
        Account storage account = _accounts[user][asset];
        uint256 obligation = account.obligation;
        if (amount > obligation) revert ObligationExceeded(user, asset, obligation, amount);
        account.obligation = obligation - amount;
        emit ObligationReleased(user, asset, amount, obligation - amount);
    }

    /// @inheritdoc IClearingVault
    function coverDefault(
        address user,
        address asset,
        uint256 amount
    ) external onlyClearingHouse nonReentrant returns (uint256 covered) {
        Account storage account = _accounts[user][asset];
        uint256 obligation = account.obligation;
        if (amount > obligation) revert ObligationExceeded(user, asset, obligation, amount);
        uint256 balance = account.balance;
        covered = amount < balance ? amount : balance;
        account.obligation = obligation - amount;
        account.balance = balance - covered;
        totalBalance[asset] -= covered;
        emit DefaultCovered(user, asset, amount, covered);
        _send(asset, clearingHouse, covered);
    }

    /// @inheritdoc IClearingVault
    function markNetted(bytes32[] calldata guaranteeIds) external onlyClearingHouse {
        for (uint256 i = 0; i < guaranteeIds.length; ++i) {
            bytes32 id = guaranteeIds[i];
            Consumption how = consumption[id];
            if (how != Consumption.None) revert GuaranteeAlreadyConsumed(id, how);
            consumption[id] = Consumption.Netted;
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

    /// @notice Replaces the operator's BLS public key (G1, EIP-2537 encoding). Certificates signed with the
    /// previous key stop verifying at once.
    /// @dev Rejects points off the curve, outside the prime-order subgroup (the G1 MSM precompile checks
    /// both) and the identity.
    function setOperatorKey(BLS.G1Point calldata key) external onlyRole(KEY_MANAGER_ROLE) {
        _checkOperatorKey(key);
        _operatorKey = key;
        operatorKeySet = true;
        emit OperatorKeyRotated(keccak256(abi.encode(key)), key);
    }

    /// @notice Adds `token` to, or removes it from, the deposit allow-list. Removal stops new deposits only;
    /// existing balances stay withdrawable and usable for clearing.
    function setTokenAllowed(address token, bool allowed) external onlyRole(CONFIG_ROLE) {
        if (token == address(0) || token.code.length == 0) revert InvalidToken(token);
        isTokenAllowed[token] = allowed;
        emit TokenAllowListUpdated(token, allowed);
    }

    /// @notice Adds `registry` to, or removes it from, the trusted validation registries.
    function setTrustedRegistry(address registry, bool trusted) external onlyRole(CONFIG_ROLE) {
        if (registry.code.length == 0) revert InvalidRegistry(registry);
        isTrustedRegistry[registry] = trusted;
        emit TrustedRegistryUpdated(registry, trusted);
    }

    /// @notice Sets all timings at once, enforcing
    /// `withdrawalGracePeriod > cycleLength + commitDelay + paymentWindow + defaultWindow` (docs/protocol.md, grace-period invariant).
    /// @dev A longer grace period also applies to open withdrawal requests (see {withdrawalFinalizableAt});
    /// a shorter one does not.
    function setTimings(Timings calldata timings_) external onlyRole(CONFIG_ROLE) {
        _setTimings(timings_);
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
        return _accounts[user][asset].obligation;
    }

    /// @notice `user`'s balance not reserved by obligations: what a withdrawal or remuneration may take.
    function freeCollateralOf(address user, address asset) public view returns (uint256) {
        Account storage account = _accounts[user][asset];
        return account.balance > account.obligation ? account.balance - account.obligation : 0;
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

    /// @notice The operator's BLS public key (EIP-2537 encoding).
    function operatorKey() external view returns (BLS.G1Point memory) {
        return _operatorKey;
    }

    /// @notice All timings.
    function timings() external view returns (Timings memory) {
        return _timings;
    }

    /// @inheritdoc IClearingVault
    function paymentWindow() external view returns (uint64) {
        return _timings.paymentWindow;
    }

    /// @inheritdoc IClearingVault
    function defaultWindow() external view returns (uint64) {
        return _timings.defaultWindow;
    }

    /// @notice Seconds between a withdrawal request and its finalisation.
    function withdrawalGracePeriod() external view returns (uint64) {
        return _timings.withdrawalGracePeriod;
    }

    // ------------------------------------------------------------------ internal

    function _credit(address user, address asset, uint256 amount) private {
        uint256 balance = _accounts[user][asset].balance + amount;
        _accounts[user][asset].balance = balance;
        totalBalance[asset] += amount;
        emit Deposited(user, asset, amount, balance);
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

    function _setTimings(Timings memory t) private {
        if (t.cycleLength == 0) revert ZeroCycleLength();
        if (t.paymentWindow == 0) revert ZeroPaymentWindow();
        uint256 clearingPath = uint256(t.cycleLength) + t.commitDelay + t.paymentWindow + t.defaultWindow;
        if (t.withdrawalGracePeriod <= clearingPath)
            revert GracePeriodTooShort(t.withdrawalGracePeriod, clearingPath);
        if (t.withdrawalGracePeriod > MAX_WITHDRAWAL_GRACE_PERIOD) {
            revert GracePeriodTooLong(t.withdrawalGracePeriod, MAX_WITHDRAWAL_GRACE_PERIOD);
        }
        _timings = t;
        emit TimingsUpdated(t);
    }

    function _verifiedV2Claims(
        bytes calldata claims,
        BLS.G2Point calldata signature
    ) private view returns (CertificateCodec.CertificateClaims memory c) {
        c = CertificateCodec.decodeClaims(claims);
        if (c.version != CertificateCodec.VERSION_V2) revert NotV2Certificate(c.version);
        bytes32 domain = CertificateCodec.certificateDomain(block.chainid, address(this));
        if (c.domain != domain) revert CertificateDomainMismatch(domain, c.domain);
        bytes32 id = CertificateCodec.guaranteeId(block.chainid, address(this), c.user, c.reqId);
        if (c.guaranteeId != id) revert GuaranteeIdMismatch(id, c.guaranteeId);
        if (!operatorKeySet) revert OperatorKeyNotSet();
        if (!BLSVerifier.verify(_operatorKey, claims, signature, BLSVerifier.POP_DST)) {
            revert InvalidCertificateSignature();
        }
    }

    function _checkValidation(CertificateCodec.ValidationPolicy memory p, bytes32 guaranteeId) private view {
        if (!isTrustedRegistry[p.registry]) revert UntrustedRegistry(p.registry);
        bytes32 requestHash = CertificateCodec.validationRequestHash(block.chainid, p, guaranteeId);
        (
            address validator,
            uint256 agentId,
            uint8 response,
            ,
            string memory tag,
            uint256 lastUpdate
        ) = IValidationRegistry(p.registry).getValidationStatusFor(requestHash, p.validator);
        if (validator != p.validator) revert ValidatorMismatch(p.validator, validator);
        if (agentId != p.agentId) revert AgentIdMismatch(p.agentId, agentId);
        if (lastUpdate == 0) revert ValidationResponseMissing(requestHash);
        if (response < p.minScore) revert ValidationScoreTooLow(response, p.minScore);
        if (keccak256(bytes(tag)) != keccak256(bytes(p.tag))) revert ValidationTagMismatch(p.tag, tag);
        if (lastUpdate > p.deadline) revert ValidationAfterDeadline(lastUpdate, p.deadline);
    }

    function _checkOperatorKey(BLS.G1Point calldata key) private view {
        if (!BLSVerifier.isValidPublicKey(key)) revert InvalidOperatorKey();
    }
}
