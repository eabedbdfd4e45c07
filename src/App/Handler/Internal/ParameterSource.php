<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

/**
 * Where the invoker takes a handler parameter's argument from.
 *
 * @internal
 */
enum ParameterSource
{
    case Request;
    case Context;
    case App;
    /** A fresh Response the handler may fill and leave to be sent. */
    case Response;
    /** The request's Session (the Sessions middleware, App::sessions()). */
    case Session;
    /** A route parameter of the same name, coerced to the declared type. */
    case Route;
    /** Nothing the invoker can supply: the default value (or null) is passed. */
    case Default;
}
