<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** The protocol-level outcome an END_REQUEST reports (spec §5.5). */
enum ProtocolStatus: int
{
    /** The request ran to its end; the application status says how it went. */
    case RequestComplete = 0;
    /** The application cannot take a second request on this connection (no multiplexing). */
    case CantMpxConn = 1;
    /** The application is out of a resource (e.g. database connections) and rejected the request. */
    case Overloaded = 2;
    /** The application does not play the role the BEGIN_REQUEST asked for. */
    case UnknownRole = 3;
}
