/**
 * The facilitator's time source: the one Clock interface, system clock and manual clock (tests) both
 * services share (runtime/clock.ts); the claim timestamp window, policy deadlines and token expiry
 * compare against "now".
 */
export { type Clock, ManualClock, systemClock } from "../runtime/clock";
