<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** The role a BEGIN_REQUEST asks the application to play (spec §6). */
enum Role: int
{
    case Responder = 1;
    case Authorizer = 2;
    case Filter = 3;
}
