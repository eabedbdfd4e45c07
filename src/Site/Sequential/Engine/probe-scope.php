<?php

declare(strict_types=1);

// Run by GlobalScope::probe() through include.php: a top-level variable must land in $GLOBALS.

$kilnGlobalScopeProbe = 'global';

return \Kiln\Site\Sequential\Engine\GlobalScope::probeSaw();
