// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @title Eip3009Token
/// @notice Test-only ERC-20 with EIP-3009 `transferWithAuthorization`, the transfer x402's `exact` scheme
/// settles on EVM chains (as USDC does). Used by `npm run bench:vs-exact` to run the official x402 EVM
/// facilitator on the Hardhat chain next to Surety. Not deployed by the devnet or production scripts.
contract Eip3009Token is ERC20, EIP712 {
    /// @notice EIP-3009 typehash of `TransferWithAuthorization`.
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );
    /// @notice EIP-3009 typehash of `ReceiveWithAuthorization` (x402 `batch-settlement` deposits use it).
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );

    /// @dev EIP-712 domain version, also served by {version} (the `exact` scheme reads it).
    string private constant DOMAIN_VERSION = "2";

    mapping(address authorizer => mapping(bytes32 nonce => bool used)) private _authorizationUsed;

    /// @notice An authorization was executed.
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);

    /// @notice `block.timestamp` is not after `validAfter`.
    error AuthorizationNotYetValid(uint256 validAfter);
    /// @notice `block.timestamp` is not before `validBefore`.
    error AuthorizationExpired(uint256 validBefore);
    /// @notice This authorizer's nonce was already used.
    error AuthorizationAlreadyUsed(address authorizer, bytes32 nonce);
    /// @notice The signature is not `from`'s over this authorization.
    error InvalidAuthorizationSignature();
    /// @notice `receiveWithAuthorization` called by someone other than the payee.
    error CallerMustBePayee(address caller, address to);

    /// @param name_ Token name, also the EIP-712 domain name.
    /// @param symbol_ Token symbol.
    constructor(
        string memory name_,
        string memory symbol_
    ) ERC20(name_, symbol_) EIP712(name_, DOMAIN_VERSION) {}

    /// @notice Mints `amount` to `to` (test token: anyone may mint).
    /// @param to Recipient.
    /// @param amount Base units.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice The EIP-712 domain version.
    /// @return The version string.
    function version() external pure returns (string memory) {
        return DOMAIN_VERSION;
    }

    /// @notice Whether `authorizer` has used `nonce`.
    /// @param authorizer The signer of authorizations.
    /// @param nonce The authorization nonce.
    /// @return True once used.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationUsed[authorizer][nonce];
    }

    /// @notice Executes a transfer signed by `from` (EIP-3009), signature as (v, r, s).
    /// @param from Payer and signer.
    /// @param to Payee.
    /// @param value Base units.
    /// @param validAfter Valid strictly after this unix time.
    /// @param validBefore Valid strictly before this unix time.
    /// @param nonce Unique per `from`.
    /// @param v Signature v.
    /// @param r Signature r.
    /// @param s Signature s.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            abi.encodePacked(r, s, v)
        );
    }

    /// @notice Executes a transfer signed by `from` (EIP-3009), signature as bytes (EOA or ERC-1271 wallet).
    /// @param from Payer and signer.
    /// @param to Payee.
    /// @param value Base units.
    /// @param validAfter Valid strictly after this unix time.
    /// @param validBefore Valid strictly before this unix time.
    /// @param nonce Unique per `from`.
    /// @param signature The signature bytes.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            signature
        );
    }

    /// @notice EIP-3009 `receiveWithAuthorization`: as `transferWithAuthorization` under its own typehash, and only
    /// the payee may submit it (so a watcher cannot front-run a deposit contract's pull).
    /// @param from Payer and signer.
    /// @param to Payee, who must be the caller.
    /// @param value Base units.
    /// @param validAfter Valid strictly after this unix time.
    /// @param validBefore Valid strictly before this unix time.
    /// @param nonce Unique per `from`.
    /// @param signature The signature bytes.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes calldata signature
    ) external {
        if (to != msg.sender) revert CallerMustBePayee(msg.sender, to);
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH,
            from,
            to,
            value,
            validAfter,
            validBefore,
            nonce,
            signature
        );
    }

    function _transferWithAuthorization(
        bytes32 typehash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        if (block.timestamp <= validAfter) revert AuthorizationNotYetValid(validAfter);
        if (block.timestamp >= validBefore) revert AuthorizationExpired(validBefore);
        if (_authorizationUsed[from][nonce]) revert AuthorizationAlreadyUsed(from, nonce);
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(typehash, from, to, value, validAfter, validBefore, nonce))
        );
        if (!SignatureChecker.isValidSignatureNow(from, digest, signature))
            revert InvalidAuthorizationSignature();
        _authorizationUsed[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }
}
