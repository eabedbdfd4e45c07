<?php

declare(strict_types=1);

// The frame of this file is switched to the global symbol table, so the script it includes runs at global
// scope, as under a web SAPI (see GlobalScope). The argument is this very frame's address, read from
// EG(current_execute_data) here, before any call. This file must stay free of variables: a variable here
// would be bound into the globals.

\Kiln\Site\Sequential\Engine\GlobalScope::enter(\Kiln\Site\Sequential\Engine\GlobalScope::$executor[\Kiln\Site\Sequential\Engine\GlobalScope::$slot]);

return include \Kiln\Site\Sequential\Engine\GlobalScope::$script;
